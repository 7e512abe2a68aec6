/* Kernel regions (gpujit/regions.cuh) for Python: a built module's region table on the device it
 * was launched on, the header's directory. The package's gpujit.regions gives them classes. */
#include "ext.h"

static int put_num(PyObject *d, const char *key, double v) { return gpujit_py_set_item(d, key, PyFloat_FromDouble(v)); }
static int put_int(PyObject *d, const char *key, unsigned long long v)
{
  return gpujit_py_set_item(d, key, PyLong_FromUnsignedLongLong(v));
}

static PyObject *region_row(const gpujit_region_stat *s)
{
  PyObject *d = PyDict_New();
  if (!d || gpujit_py_set_item(d, "name", PyUnicode_FromString(s->name)) < 0 || put_int(d, "depth", s->depth) < 0 ||
      put_int(d, "calls", s->calls) < 0 || put_num(d, "cycles_mean", s->cycles_mean) < 0 ||
      put_num(d, "cycles_median", s->cycles_median) < 0 || put_num(d, "cycles_p99", s->cycles_p99) < 0 ||
      put_num(d, "cycles_max", s->cycles_max) < 0 || put_num(d, "ns_mean", s->ns_mean) < 0 ||
      put_num(d, "ns_median", s->ns_median) < 0 || put_num(d, "ns_p99", s->ns_p99) < 0 ||
      put_num(d, "ns_max", s->ns_max) < 0 || put_num(d, "total_ns", s->total_ns) < 0 ||
      gpujit_py_set_item(d, "share", s->share >= 0 ? PyFloat_FromDouble(s->share) : (Py_INCREF(Py_None), Py_None)) < 0 ||
      put_num(d, "sm_imbalance", s->sm_imbalance) < 0 || put_num(d, "unit_imbalance", s->unit_imbalance) < 0 ||
      put_int(d, "sms", s->sms) < 0 || put_int(d, "units", s->units) < 0) {
    Py_XDECREF(d);
    return NULL;
  }
  return d;
}

/* The report as a dict: its figures, its rows, and its text (gpujit_region_report_format). */
static PyObject *report_dict(const gpujit_region_report *r)
{
  static const char *const scopes[] = {"warp", "block", "thread"};
  PyObject *d = PyDict_New(), *rows = PyList_New(0);
  char *text = NULL;
  int ok = d && rows && gpujit_region_report_format(&text, r) == 0;
  for (size_t i = 0; ok && i < r->count; i++) {
    PyObject *row = region_row(&r->regions[i]);
    ok = row && PyList_Append(rows, row) == 0;
    Py_XDECREF(row);
  }
  ok = ok && gpujit_py_set_item(d, "scope", PyUnicode_FromString(scopes[(unsigned)r->scope < 3 ? r->scope : 0])) == 0 &&
       put_int(d, "launches", r->launches) == 0 && put_num(d, "kernel_ns", r->kernel_ns) == 0 &&
       put_int(d, "events", r->events) == 0 && put_int(d, "dropped", r->dropped) == 0 &&
       put_int(d, "unmatched", r->unmatched) == 0 && put_int(d, "min_call_cycles", r->min_call_cycles) == 0 &&
       gpujit_py_set_item(d, "text", PyUnicode_FromString(text)) == 0;
  gpujit_free(text);
  if (!ok) {
    Py_XDECREF(rows);
    Py_XDECREF(d);
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
  }
  if (gpujit_py_set_item(d, "regions", rows) < 0) { /* rows stolen either way */
    Py_DECREF(d);
    return NULL;
  }
  return d;
}

/* The handle's module on the current device, where it was loaded (launched) and records regions. */
static gpujit_loaded *loaded_here(PyObject *handle)
{
  int ordinal = 0;
  gpujit_loaded *l;
  if (!gpujit_py_current_device(&ordinal))
    return NULL;
  l = gpujit_py_handle_loaded(handle, ordinal);
  if (!l || !gpujit_loaded_regions(l)) {
    PyErr_SetString(PyExc_ValueError, l ? "the module records no regions: build it with regions=True and "
                                          "#include <gpujit/regions.cuh>"
                                        : "the module has not been launched on the current device yet");
    return NULL;
  }
  return l;
}

/* regions_read(handle, kernel_ms, launches) -> dict: the events since the last reset, summarised */
static PyObject *regions_read(PyObject *self, PyObject *args)
{
  PyObject *handle, *out;
  double kernel_ms;
  unsigned launches;
  gpujit_loaded *l;
  gpujit_region_report *r = NULL;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "OdI", &handle, &kernel_ms, &launches) || !(l = loaded_here(handle)))
    return NULL;
  Py_BEGIN_ALLOW_THREADS
  err = gpujit_loaded_regions_read(&r, l, kernel_ms, launches);
  Py_END_ALLOW_THREADS
  if (err < 0)
    return gpujit_py_raise(err);
  out = report_dict(r);
  gpujit_region_report_free(r);
  return out;
}

/* regions_reset(handle) -> None: forget the events recorded so far */
static PyObject *regions_reset(PyObject *self, PyObject *args)
{
  PyObject *handle;
  gpujit_loaded *l;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "O", &handle) || !(l = loaded_here(handle)))
    return NULL;
  if ((err = gpujit_loaded_regions_reset(l)) < 0)
    return gpujit_py_raise(err);
  Py_RETURN_NONE;
}

/* timing_regions(ordinals) -> [dict]: the tables of the last window that closed on each device (a
 * timer's, a timed region's, a benchmark's samples'), one per module with regions launched there,
 * each with its "device"; a table that could not be read is left out (the window's end raised). */
static PyObject *timing_regions(PyObject *self, PyObject *ordinals)
{
  PyObject *all;
  (void)self;
  if (!PyList_Check(ordinals)) {
    PyErr_SetString(PyExc_TypeError, "timing_regions takes a list of device ordinals");
    return NULL;
  }
  if (!(all = PyList_New(0)))
    return NULL;
  for (Py_ssize_t i = 0; i < PyList_Size(ordinals); i++) {
    int ordinal = (int)PyLong_AsLong(PyList_GetItem(ordinals, i));
    gpujit_device *dev = ordinal == -1 && PyErr_Occurred() ? NULL : gpujit_py_device(ordinal);
    gpujit_loaded *l = NULL;
    const gpujit_region_report *r;
    if (!dev) {
      Py_DECREF(all);
      return NULL;
    }
    for (size_t k = 0; (r = gpujit_timing_regions_at(dev, k, &l)) != NULL || l; k++) {
      PyObject *d;
      if (!r)
        continue;
      if (!(d = report_dict(r)) || put_int(d, "device", (unsigned)ordinal) < 0 || PyList_Append(all, d) < 0) {
        Py_XDECREF(d);
        Py_DECREF(all);
        return NULL;
      }
      Py_DECREF(d);
    }
  }
  return all;
}

/* include_dir() -> str: where gpujit/regions.cuh is */
static PyObject *include_dir(PyObject *self, PyObject *unused)
{
  const char *dir = gpujit_include_dir();
  (void)self, (void)unused;
  if (!dir) {
    PyErr_SetString(PyExc_FileNotFoundError, "gpujit's device headers (gpujit/regions.cuh) not found beside the "
                                             "package nor where it was installed; set GPUJIT_INCLUDE_DIR");
    return NULL;
  }
  return PyUnicode_FromString(dir);
}

static PyMethodDef methods[] = {
    {"regions_read", regions_read, METH_VARARGS, "A module's kernel regions on the current device, summarised."},
    {"regions_reset", regions_reset, METH_VARARGS, "Forget a module's kernel-region events so far."},
    {"timing_regions", timing_regions, METH_O, "The region tables of the devices' last closed windows."},
    {"include_dir", include_dir, METH_NOARGS, "The directory of gpujit/regions.cuh, for -I."},
    {NULL, NULL, 0, NULL},
};

int gpujit_py_add_regions(PyObject *m) { return PyModule_AddFunctions(m, methods); }
