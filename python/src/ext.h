/* What the extension's files share: CPython's limited API 3.9, gpujit's public C API, the error
 * translation and the process's devices. */
#ifndef GPUJIT_PY_EXT_H
#define GPUJIT_PY_EXT_H

#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "gpujit.h"

/** Raise the exception of C error `code` (the package's class for it once registered, else
 *  _gpujit.Error) with gpujit_error_last() and the log; returns NULL. */
PyObject *gpujit_py_raise(int code);
/** d[key] = value, stealing value; -1 with an exception set. */
int gpujit_py_set_item(PyObject *d, const char *key, PyObject *value);

/** The device gpujit work goes to now: the current CUDA context's (CuPy's or PyTorch's current
 *  device), else $GPUJIT_DEVICE or 0; opened once, issuing on CUDA's legacy default stream.
 *  NULL with an exception set. */
gpujit_device *gpujit_py_current_device(int *ordinal);
/** Device `ordinal`, opened once as above; NULL with an exception set. */
gpujit_device *gpujit_py_device(int ordinal);
/** The devices opened so far, in ordinal order; returns how many. */
size_t gpujit_py_open_devices(gpujit_device **out, size_t max);

/** Add the Kernel and ModuleHandle types (launch.c). */
int gpujit_py_add_launch(PyObject *m);
/** Add the timing functions (timing.c). */
int gpujit_py_add_timing(PyObject *m);
/** Add the profile functions (profile.c). */
int gpujit_py_add_profile(PyObject *m);

#endif
