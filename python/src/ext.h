/* What the extension's files share, and nothing else: CPython's limited API 3.9, gpujit's public
 * C API, the error translator and helpers (errors.c), the process's devices (devices.c), a
 * kernel's parameter table and argument conversion (args.c), module handles (kernel.c), and each
 * concern's function that adds itself to the module (_gpujit.c calls them). */
#ifndef GPUJIT_PY_EXT_H
#define GPUJIT_PY_EXT_H

#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "gpujit.h"

#define GPUJIT_PY_MAX_DEVICES 64
#define GPUJIT_PY_MAX_PARAMS 64

/* ---- errors.c ---- */
/** Raise the exception of C error `code` (the package's class for it once registered, else
 *  _gpujit.Error) with gpujit_error_last() and the log; returns NULL. */
PyObject *gpujit_py_raise(int code);
/** d[key] = value, stealing value; -1 with an exception set. */
int gpujit_py_set_item(PyObject *d, const char *key, PyObject *value);
/** A list of str (or None) as a C array of UTF-8 strings; *n its length. The strings belong to
 *  *keep (a list of bytes objects the caller releases with Py_XDECREF). 0, or -1 with an
 *  exception set. */
int gpujit_py_str_list(PyObject *o, const char *what, const char ***out, size_t *n, PyObject **keep);

/* ---- devices.c ---- */
/** The device gpujit work goes to now: the current CUDA context's (CuPy's or PyTorch's current
 *  device), else $GPUJIT_DEVICE or 0; opened once, issuing on CUDA's legacy default stream.
 *  NULL with an exception set. */
gpujit_device *gpujit_py_current_device(int *ordinal);
/** Device `ordinal`, opened once as above; NULL with an exception set. */
gpujit_device *gpujit_py_device(int ordinal);
/** The devices opened so far, in ordinal order; returns how many. */
size_t gpujit_py_open_devices(gpujit_device **out, size_t max);

/* ---- args.c ---- */
/** A kernel's parameters as argument conversion reads them. */
typedef struct gpujit_py_params {
  char name[256];  /* the kernel as the user named it (a name expression, or the symbol) */
  int nparams;     /* -1: unknown (a PTX image of an extern "C" kernel) */
  gpujit_param_type types[GPUJIT_PY_MAX_PARAMS];
  int sizes[GPUJIT_PY_MAX_PARAMS];
  int typed;       /* types came from a written signature */
} gpujit_py_params;
/** Argument `o` for parameter `i` of `k` into `slot` (8 bytes, or the struct's size);
 *  *array_dev set to a device array's device. 0, or -1 with an exception set. */
int gpujit_py_convert(const gpujit_py_params *k, int i, PyObject *o, void *slot, int *array_dev);
/** "parameter 3 (float32) of scale<float>", for messages. */
void gpujit_py_where(char *buf, size_t cap, const gpujit_py_params *k, int i);
/** grid= or block=: an int or a tuple of 1 to 3 ints. */
int gpujit_py_dims(PyObject *o, unsigned out[3], const char *what);
/** stream=: None, an int handle, a CuPy or PyTorch stream, or an object with __cuda_stream__. */
int gpujit_py_stream_of(PyObject *o, void **out);
/** Intern the attribute names conversion looks up; -1 with an exception set. */
int gpujit_py_args_init(void);

/* ---- kernel.c ---- */
/** A built module as a ModuleHandle (it owns `m`); NULL with an exception set. */
PyObject *gpujit_py_handle_new(gpujit_module *m);

/* ---- each concern adds its functions (and types) to the module ---- */
int gpujit_py_add_errors(PyObject *m);
int gpujit_py_add_build(PyObject *m);
int gpujit_py_add_cache(PyObject *m);
int gpujit_py_add_trace(PyObject *m);
int gpujit_py_add_kernels(PyObject *m);
int gpujit_py_add_timing(PyObject *m);
int gpujit_py_add_profile(PyObject *m);
int gpujit_py_add_config(PyObject *m);

#endif
