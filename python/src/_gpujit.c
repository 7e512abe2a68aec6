/*
 * gpujit's Python extension: the public C API (include/gpujit.h) under CPython's limited API, so
 * one abi3 wheel serves every Python from 3.9. Nothing is implemented twice: each function turns
 * Python arguments into the C API's, calls it, and turns the answer into plain Python objects;
 * the package (python/gpujit) gives them their classes and exceptions.
 *
 * Errors raise _gpujit.Error(code, name, message, log): the C error code, its symbolic name
 * ("GPUJIT_ECOMPILE"), gpujit_error_last() and, for compiles, the diagnostics (errors.c).
 *
 * This file is the module's init and its table; each concern is a file of its own, laid out as
 * CPython's own C modules are: errors.c, build.c, cache.c, trace.c, devices.c, args.c (argument
 * conversion), kernel.c (the Kernel and ModuleHandle types), timing.c, profile.c.
 */
#include "ext.h"

static PyObject *version(PyObject *self, PyObject *unused)
{
  (void)self, (void)unused;
  return PyUnicode_FromString(gpujit_version());
}

/* demangle(name) -> the C++ symbol as people read it (the name itself when not mangled) */
static PyObject *demangle(PyObject *self, PyObject *args)
{
  const char *name;
  char out[2048];
  (void)self;
  if (!PyArg_ParseTuple(args, "s", &name))
    return NULL;
  gpujit_demangle(name, out, sizeof(out));
  return PyUnicode_FromString(out);
}

/* step() -> None: the program's step boundary (gpujit_profile_step: a no-op outside a profile) */
static PyObject *step(PyObject *self, PyObject *unused)
{
  (void)self, (void)unused;
  gpujit_profile_step();
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"version", version, METH_NOARGS, "gpujit's version."},
    {"step", step, METH_NOARGS, "A step boundary: the next step begins (nothing outside a profile)."},
    {"demangle", demangle, METH_VARARGS, "A C++ symbol as people read it; other names as they are."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_gpujit", "gpujit's C library.", -1, methods, NULL, NULL, NULL, NULL};

/* Each concern adds its functions and types: errors first (every other file raises through it). */
PyMODINIT_FUNC PyInit__gpujit(void);
PyMODINIT_FUNC PyInit__gpujit(void)
{
  PyObject *m = PyModule_Create(&module);
  if (!m)
    return NULL;
  if (gpujit_py_add_errors(m) < 0 || gpujit_py_add_build(m) < 0 || gpujit_py_add_cache(m) < 0 ||
      gpujit_py_add_trace(m) < 0 || gpujit_py_add_kernels(m) < 0 || gpujit_py_add_timing(m) < 0 ||
      gpujit_py_add_profile(m) < 0 || gpujit_py_add_config(m) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
