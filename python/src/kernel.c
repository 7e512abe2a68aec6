/*
 * Launching gpujit kernels on other frameworks' arrays: a built module's handle (loaded once per
 * device), and Kernel objects whose call turns each argument into the parameter the kernel's
 * table says (args.c; the C library reads C++ kernels' types from their mangled names; extern "C"
 * ones give sizes only, so a 4- or 8-byte scalar there needs a NumPy scalar or a written
 * signature). The call is the hot path: no Python frame, attribute lookups cached per argument type.
 */
#include "ext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- module handles ------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  gpujit_module *module;
  gpujit_loaded *loaded[GPUJIT_PY_MAX_DEVICES];
} HandleObject;

static PyTypeObject *HandleType;

static void handle_dealloc(PyObject *o)
{
  HandleObject *h = (HandleObject *)o;
  PyTypeObject *tp = Py_TYPE(o);
  for (int i = 0; i < GPUJIT_PY_MAX_DEVICES; i++)
    gpujit_loaded_free(h->loaded[i]);
  gpujit_module_free(h->module);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(o);
  Py_DECREF(tp);
}

PyObject *gpujit_py_handle_new(gpujit_module *m)
{
  HandleObject *h = PyObject_New(HandleObject, HandleType);
  if (!h)
    return NULL;
  h->module = m;
  memset(h->loaded, 0, sizeof(h->loaded));
  return (PyObject *)h;
}

gpujit_loaded *gpujit_py_handle_loaded(PyObject *o, int ordinal)
{
  if (!o || !PyObject_TypeCheck(o, HandleType) || ordinal < 0 || ordinal >= GPUJIT_PY_MAX_DEVICES)
    return NULL;
  return ((HandleObject *)o)->loaded[ordinal];
}

static PyType_Slot handle_slots[] = {
    {Py_tp_dealloc, (void *)handle_dealloc},
    {Py_tp_doc, (void *)"A built module as the C library holds it (loaded on a device at first launch)."},
    {0, NULL},
};
static PyType_Spec handle_spec = {"_gpujit.ModuleHandle", sizeof(HandleObject), 0, Py_TPFLAGS_DEFAULT, handle_slots};

/* ---- kernels -------------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  PyObject *handle; /* HandleObject */
  char symbol[1024];
  gpujit_py_params p; /* its name (as the user named it) and parameter table */
  gpujit_kernel *on[GPUJIT_PY_MAX_DEVICES];
} KernelObject;

static PyTypeObject *KernelType;

static int kernel_init(PyObject *o, PyObject *args, PyObject *kw)
{
  KernelObject *k = (KernelObject *)o;
  PyObject *handle;
  const char *symbol, *name, *signature = NULL;
  gpujit_module *m;
  int err, sizes[GPUJIT_PY_MAX_PARAMS], n = -1;
  (void)kw;
  if (!PyArg_ParseTuple(args, "O!ssz", HandleType, &handle, &symbol, &name, &signature))
    return -1;
  m = ((HandleObject *)handle)->module;
  snprintf(k->symbol, sizeof(k->symbol), "%s", symbol);
  snprintf(k->p.name, sizeof(k->p.name), "%s", name);
  if ((err = gpujit_module_kernel_param_types(m, symbol, k->p.types, k->p.sizes, GPUJIT_PY_MAX_PARAMS, &k->p.nparams)) < 0) {
    gpujit_py_raise(err);
    return -1;
  }
  if (signature) {
    gpujit_param_type t[GPUJIT_PY_MAX_PARAMS];
    if ((err = gpujit_param_types_parse(t, GPUJIT_PY_MAX_PARAMS, &n, signature)) < 0) {
      gpujit_py_raise(err);
      return -1;
    }
    if (k->p.nparams >= 0 && n != k->p.nparams) {
      PyErr_Format(PyExc_ValueError, "signature of %s has %d parameters; the kernel has %d", name, n, k->p.nparams);
      return -1;
    }
    for (int i = 0; i < n; i++) {
      size_t want = gpujit_param_type_size(t[i]);
      sizes[i] = k->p.nparams >= 0 ? k->p.sizes[i] : (int)want;
      if (k->p.nparams >= 0 && want != (size_t)k->p.sizes[i]) {
        PyErr_Format(PyExc_ValueError, "signature of %s: parameter %d is %s (%d bytes) but the kernel's is %d bytes",
                     name, i + 1, gpujit_param_type_name(t[i]), (int)want, k->p.sizes[i]);
        return -1;
      }
      if (k->p.nparams >= 0 && k->p.types[i] != GPUJIT_PARAM_UNKNOWN && k->p.types[i] != t[i]) {
        PyErr_Format(PyExc_ValueError, "signature of %s: parameter %d is %s but the kernel's symbol says %s", name,
                     i + 1, gpujit_param_type_name(t[i]), gpujit_param_type_name(k->p.types[i]));
        return -1;
      }
    }
    memcpy(k->p.types, t, (size_t)n * sizeof(t[0]));
    memcpy(k->p.sizes, sizes, (size_t)n * sizeof(sizes[0]));
    k->p.nparams = n;
    k->p.typed = 1;
  }
  Py_INCREF(handle);
  Py_XDECREF(k->handle);
  k->handle = handle;
  return 0;
}

static void kernel_dealloc(PyObject *o)
{
  PyTypeObject *tp = Py_TYPE(o);
  Py_XDECREF(((KernelObject *)o)->handle);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(o);
  Py_DECREF(tp);
}

/* The kernel on device `ordinal`, its module loaded there at first use. */
static gpujit_kernel *kernel_on(KernelObject *k, gpujit_device *dev, int ordinal)
{
  HandleObject *h = (HandleObject *)k->handle;
  int err;
  if (k->on[ordinal])
    return k->on[ordinal];
  if (!h->loaded[ordinal] && (err = gpujit_module_load(&h->loaded[ordinal], dev, h->module)) < 0) {
    gpujit_py_raise(err);
    return NULL;
  }
  if ((err = gpujit_kernel_get(&k->on[ordinal], h->loaded[ordinal], k->symbol)) < 0) {
    gpujit_py_raise(err);
    return NULL;
  }
  return k->on[ordinal];
}

static PyObject *kernel_call(PyObject *o, PyObject *args, PyObject *kw)
{
  KernelObject *k = (KernelObject *)o;
  Py_ssize_t nargs = PyTuple_Size(args), nkw = kw ? PyDict_Size(kw) : 0;
  unsigned grid[3], block[3], shared = 0;
  uint64_t slots[GPUJIT_PY_MAX_PARAMS];
  int array_dev[GPUJIT_PY_MAX_PARAMS];
  void *ptrs[GPUJIT_PY_MAX_PARAMS], *stream = GPUJIT_STREAM_LEGACY;
  gpujit_device *dev;
  gpujit_kernel *kern;
  int ordinal, err;
  if (nargs < 2) {
    PyErr_Format(PyExc_TypeError, "%s(grid, block, *args, shared=0, stream=None): grid and block are missing", k->p.name);
    return NULL;
  }
  if (gpujit_py_dims(PyTuple_GetItem(args, 0), grid, "grid") < 0 || gpujit_py_dims(PyTuple_GetItem(args, 1), block, "block") < 0)
    return NULL;
  if (nkw) {
    PyObject *sh = PyDict_GetItemString(kw, "shared"), *st = PyDict_GetItemString(kw, "stream");
    if (nkw > (sh != NULL) + (st != NULL)) {
      PyErr_Format(PyExc_TypeError, "%s: the only keyword arguments are shared= and stream=", k->p.name);
      return NULL;
    }
    if (sh) {
      long v = PyLong_AsLong(sh);
      if (v < 0 || v > 0x7fffffffL) {
        if (!PyErr_Occurred())
          PyErr_Format(PyExc_ValueError, "shared must be 0 or more bytes (got %ld)", v);
        return NULL;
      }
      shared = (unsigned)v;
    }
    if (gpujit_py_stream_of(st, &stream) < 0)
      return NULL;
  }
  if (k->p.nparams < 0) {
    PyErr_Format(PyExc_TypeError, "%s: the image does not say its parameters (a PTX image of an extern \"C\" kernel): "
                 "give module.kernel(name, signature=\"...\")", k->p.name);
    return NULL;
  }
  if (nargs - 2 != k->p.nparams) {
    PyErr_Format(PyExc_TypeError, "%s takes %d kernel arguments (%zd given)", k->p.name, k->p.nparams, nargs - 2);
    return NULL;
  }
  for (int i = 0; i < k->p.nparams; i++) { /* before the device: bad arguments fail the same everywhere */
    ptrs[i] = &slots[i];
    array_dev[i] = -1;
    if (gpujit_py_convert(&k->p, i, PyTuple_GetItem(args, i + 2), &slots[i], &array_dev[i]) < 0)
      return NULL;
  }
  if (!(dev = gpujit_py_current_device(&ordinal)) || !(kern = kernel_on(k, dev, ordinal)))
    return NULL;
  for (int i = 0; i < k->p.nparams; i++)
    if (array_dev[i] >= 0 && array_dev[i] != ordinal) {
      char at[400];
      gpujit_py_where(at, sizeof(at), &k->p, i);
      PyErr_Format(PyExc_ValueError, "%s: the array is on device %d but the kernel launches on device %d (the current "
                   "device)", at, array_dev[i], ordinal);
      return NULL;
    }
  gpujit_device_set_stream(dev, stream);
  if ((err = gpujit_launch(kern, grid, block, shared, ptrs)) < 0)
    return gpujit_py_raise(err);
  Py_RETURN_NONE;
}

static PyObject *kernel_get_name(PyObject *o, void *c) { (void)c; return PyUnicode_FromString(((KernelObject *)o)->p.name); }
static PyObject *kernel_get_symbol(PyObject *o, void *c) { (void)c; return PyUnicode_FromString(((KernelObject *)o)->symbol); }

static PyObject *kernel_get_params(PyObject *o, void *c)
{
  KernelObject *k = (KernelObject *)o;
  PyObject *l;
  (void)c;
  if (k->p.nparams < 0)
    Py_RETURN_NONE;
  if (!(l = PyList_New(0)))
    return NULL;
  for (int i = 0; i < k->p.nparams; i++) {
    PyObject *p = Py_BuildValue("(si)", gpujit_param_type_name(k->p.types[i]), k->p.sizes[i]);
    if (!p || PyList_Append(l, p) < 0) {
      Py_XDECREF(p);
      Py_DECREF(l);
      return NULL;
    }
    Py_DECREF(p);
  }
  return l;
}

static PyGetSetDef kernel_getset[] = {
    {"name", kernel_get_name, NULL, "The kernel as it was asked for (a name expression or a symbol).", NULL},
    {"symbol", kernel_get_symbol, NULL, "The kernel's symbol in the image.", NULL},
    {"params", kernel_get_params, NULL,
     "Each parameter as (type, bytes); type is 'unknown' where only the size is known (extern \"C\"), "
     "None when not even that is.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot kernel_slots[] = {
    {Py_tp_init, (void *)kernel_init},
    {Py_tp_new, (void *)PyType_GenericNew},
    {Py_tp_dealloc, (void *)kernel_dealloc},
    {Py_tp_call, (void *)kernel_call},
    {Py_tp_getset, (void *)kernel_getset},
    {Py_tp_doc, (void *)"Kernel(handle, symbol, name, signature): a kernel of a built module; call it as "
                        "kernel(grid, block, *args, shared=0, stream=None)."},
    {0, NULL},
};
static PyType_Spec kernel_spec = {"_gpujit.Kernel", sizeof(KernelObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                                  kernel_slots};

int gpujit_py_add_kernels(PyObject *m)
{
  if (gpujit_py_args_init() < 0)
    return -1;
  if (!(HandleType = (PyTypeObject *)PyType_FromSpec(&handle_spec)) ||
      !(KernelType = (PyTypeObject *)PyType_FromSpec(&kernel_spec)))
    return -1;
  Py_INCREF(HandleType);
  Py_INCREF(KernelType);
  if (PyModule_AddObject(m, "ModuleHandle", (PyObject *)HandleType) < 0 ||
      PyModule_AddObject(m, "Kernel", (PyObject *)KernelType) < 0)
    return -1;
  return 0;
}
