/* The extension's error translator and the small helpers every other file calls: a C error
 * code raised as the package's exception class (registered by gpujit/_errors.py) with
 * gpujit_error_last() and the log; a dict item set; a list of str as C strings. */
#include "ext.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static PyObject *Error;   /* _gpujit.Error */
static PyObject *classes; /* {code: the package's exception class}, once registered */

PyObject *gpujit_py_raise(int code)
{
  const char *log = gpujit_error_log();
  PyObject *args = Py_BuildValue("(isss)", code, gpujit_error_name(code), gpujit_error_last(), log ? log : "");
  PyObject *code_o = PyLong_FromLong(code), *cls = classes && code_o ? PyDict_GetItem(classes, code_o) : NULL;
  Py_XDECREF(code_o);
  if (args) {
    if (cls) { /* raise the package's class itself: no Python frame between the C call and the user */
      PyObject *e = PyObject_CallObject(cls, args);
      if (e) {
        PyErr_SetObject(cls, e);
        Py_DECREF(e);
      }
    } else {
      PyErr_SetObject(Error, args);
    }
    Py_DECREF(args);
  }
  gpujit_error_clear();
  return NULL;
}

/* _set_error_classes({code: class}): gpujit/_errors.py registers its classes. */
static PyObject *set_error_classes(PyObject *self, PyObject *arg)
{
  (void)self;
  if (!PyDict_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "a dict {code: class}");
    return NULL;
  }
  Py_INCREF(arg);
  Py_XDECREF(classes);
  classes = arg;
  Py_RETURN_NONE;
}

/* A list of str (or None) as a C array of UTF-8 strings; *n its length. The strings belong to
 * *keep (a list of bytes objects the caller releases with Py_XDECREF): CPython 3.9's limited API
 * has no borrowed UTF-8 view of a str. @return 0, or -1 with an exception set. */
int gpujit_py_str_list(PyObject *o, const char *what, const char ***out, size_t *n, PyObject **keep)
{
  Py_ssize_t len;
  *out = NULL;
  *n = 0;
  *keep = NULL;
  if (!o || o == Py_None)
    return 0;
  if (!PyList_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be a list of str", what);
    return -1;
  }
  len = PyList_Size(o);
  if (!(*keep = PyList_New(0)) || !(*out = calloc((size_t)len + 1, sizeof(**out)))) {
    if (!PyErr_Occurred())
      PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *s = PyList_GetItem(o, i), *b; /* borrowed */
    if (!PyUnicode_Check(s)) {
      PyErr_Format(PyExc_TypeError, "%s[%zd] must be a str", what, i);
      return -1;
    }
    if (!(b = PyUnicode_AsUTF8String(s)))
      return -1;
    if (PyList_Append(*keep, b) < 0) {
      Py_DECREF(b);
      return -1;
    }
    Py_DECREF(b); /* the list holds it */
    (*out)[i] = PyBytes_AsString(b);
  }
  *n = (size_t)len;
  return 0;
}

int gpujit_py_set_item(PyObject *d, const char *key, PyObject *value)
{
  int r = value ? PyDict_SetItemString(d, key, value) : -1;
  Py_XDECREF(value);
  return r;
}

/* error_names() -> {code: (name, text)}: every C error code, for the exception classes. */
static PyObject *error_names(PyObject *self, PyObject *unused)
{
  PyObject *d = PyDict_New();
  (void)self, (void)unused;
  for (int code = -1; d && code >= -64; code--) {
    const char *name = gpujit_error_name(code);
    PyObject *k, *v;
    if (!name || strncmp(name, "GPUJIT_E", 8))
      break;
    k = PyLong_FromLong(code);
    v = Py_BuildValue("(ss)", name, gpujit_strerror(code));
    if (!k || !v || PyDict_SetItem(d, k, v) < 0) {
      Py_XDECREF(k), Py_XDECREF(v), Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(k), Py_DECREF(v);
  }
  return d;
}

int gpujit_py_add_errors(PyObject *m)
{
  static PyMethodDef methods[] = {
      {"error_names", error_names, METH_NOARGS, "Every C error code: {code: (name, text)}."},
      {"_set_error_classes", set_error_classes, METH_O, "Register the package's exception classes by C code."},
      {NULL, NULL, 0, NULL},
  };
  if (!(Error = PyErr_NewException("_gpujit.Error", PyExc_RuntimeError, NULL)))
    return -1;
  Py_INCREF(Error);
  if (PyModule_AddObject(m, "Error", Error) < 0) {
    Py_DECREF(Error);
    return -1;
  }
  return PyModule_AddFunctions(m, methods);
}
