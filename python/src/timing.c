/* The timing layer for Python: NVTX timers, timed regions on gpujit's devices (events or CUPTI),
 * process-wide CUPTI captures of every framework's work, the report tables and benchmarks of
 * Python callables. */
#include "ext.h"

#include <stdlib.h>
#include <string.h>

#define MAX_OPEN 64

/* The devices gpujit's regions cover: every device opened so far and the current one. */
static size_t region_devices(gpujit_device **out)
{
  int ordinal;
  if (!gpujit_py_current_device(&ordinal))
    return (size_t)-1;
  return gpujit_py_open_devices(out, MAX_OPEN);
}

/* synchronize(): wait for every stream of every device gpujit has opened and the current one. */
static PyObject *synchronize(PyObject *self, PyObject *unused)
{
  gpujit_device *devs[MAX_OPEN];
  size_t n;
  int err = 0;
  (void)self, (void)unused;
  if ((n = region_devices(devs)) == (size_t)-1)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  for (size_t i = 0; i < n && err == 0; i++)
    err = gpujit_device_synchronize(devs[i]);
  Py_END_ALLOW_THREADS;
  if (err < 0)
    return gpujit_py_raise(err);
  Py_RETURN_NONE;
}

/* current_device() -> the ordinal gpujit launches on now. */
static PyObject *current_device(PyObject *self, PyObject *unused)
{
  int ordinal;
  (void)self, (void)unused;
  if (!gpujit_py_current_device(&ordinal))
    return NULL;
  return PyLong_FromLong(ordinal);
}

static void timer_free(PyObject *cap)
{
  gpujit_timer *t = PyCapsule_GetPointer(cap, "gpujit.timer");
  if (t)
    gpujit_timer_stop(t, NULL); /* never stopped: pop its NVTX range */
  PyErr_Clear();
}

/* nvtx_push(name, color) -> handle; an NVTX range until nvtx_pop(handle). */
static PyObject *nvtx_push(PyObject *self, PyObject *args)
{
  const char *name;
  unsigned long color = 0;
  gpujit_timer *t = NULL;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "sk", &name, &color))
    return NULL;
  if ((err = gpujit_timer_start(&t, NULL, name, GPUJIT_TIMER_NVTX, (uint32_t)color)) < 0)
    return gpujit_py_raise(err);
  return PyCapsule_New(t, "gpujit.timer", timer_free);
}

static PyObject *nvtx_pop(PyObject *self, PyObject *cap)
{
  gpujit_timer *t = PyCapsule_GetPointer(cap, "gpujit.timer");
  (void)self;
  if (!t)
    return NULL;
  PyCapsule_SetName(cap, "gpujit.timer.done"); /* the destructor sees it stopped */
  gpujit_timer_stop(t, NULL);
  Py_RETURN_NONE;
}

/* One timed activity, named: what TimingResult is made from, and what timing_format reads back. */
static PyObject *result_dict(const gpujit_timing_result *r)
{
  return Py_BuildValue("{s:i,s:s,s:i,s:d,s:d,s:d,s:d,s:K,s:K,s:O}", "device", r->device, "name", r->name, "kind",
                       (int)r->kind, "elapsed_ms", r->elapsed_ms, "start_us", r->start_us, "host_us", r->host_us,
                       "launch_us", r->launch_us, "bytes", (unsigned long long)r->bytes, "graph_node",
                       (unsigned long long)r->graph_node, "missing", r->missing ? Py_True : Py_False);
}

/* Field `key` of a result dict as a number; -1 with an exception set when it is missing. */
static int field(PyObject *d, const char *key, double *out)
{
  PyObject *v = PyDict_Check(d) ? PyDict_GetItemString(d, key) : NULL;
  if (!v) {
    PyErr_Format(PyExc_TypeError, "a timing result needs '%s'", key);
    return -1;
  }
  *out = PyFloat_AsDouble(v);
  return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *result_list(const gpujit_timing_result *r, size_t n)
{
  PyObject *l = PyList_New(0);
  for (size_t i = 0; l && i < n; i++) {
    PyObject *t = result_dict(&r[i]);
    if (!t || PyList_Append(l, t) < 0) {
      Py_XDECREF(t);
      Py_CLEAR(l);
    } else {
      Py_DECREF(t);
    }
  }
  return l;
}

/* The ordinals of devices as a list. */
static PyObject *ordinal_list(gpujit_device *const *devs, size_t n)
{
  PyObject *l = PyList_New(0);
  for (size_t i = 0; l && i < n; i++) {
    gpujit_device_info info;
    PyObject *v;
    gpujit_device_info_get(devs[i], &info);
    v = PyLong_FromLong(info.ordinal);
    if (!v || PyList_Append(l, v) < 0)
      Py_CLEAR(l);
    Py_XDECREF(v);
  }
  return l;
}

/* timing_begin(filter, source): a timed region on every device gpujit has opened and the current
 * one; source 0 events, 1 CUPTI (serialised), 2 CUPTI concurrent. */
static PyObject *timing_begin(PyObject *self, PyObject *args)
{
  gpujit_device *devs[MAX_OPEN];
  unsigned filter;
  int source, err = 0;
  size_t n;
  (void)self;
  if (!PyArg_ParseTuple(args, "Ii", &filter, &source))
    return NULL;
  if ((n = region_devices(devs)) == (size_t)-1)
    return NULL;
  for (size_t i = 0; i < n && err == 0; i++)
    if ((err = gpujit_timing_set_source(devs[i], (gpujit_timer_source)source)) == 0)
      err = gpujit_timing_begin(devs[i], filter);
  if (err < 0)
    return gpujit_py_raise(err);
  return ordinal_list(devs, n);
}

/* timing_end(ordinals) -> [result tuples]: close the region on the devices it opened on. */
static PyObject *timing_end(PyObject *self, PyObject *ordinals)
{
  PyObject *all;
  (void)self;
  if (!PyList_Check(ordinals)) {
    PyErr_SetString(PyExc_TypeError, "timing_end takes the list timing_begin gave");
    return NULL;
  }
  if (!(all = PyList_New(0)))
    return NULL;
  for (Py_ssize_t i = 0; i < PyList_Size(ordinals); i++) {
    gpujit_timing_result *r = NULL;
    size_t nr = 0;
    gpujit_device *dev = gpujit_py_device((int)PyLong_AsLong(PyList_GetItem(ordinals, i)));
    int err = dev ? gpujit_timing_end(&r, &nr, dev) : 0;
    PyObject *l;
    if (!dev) {
      Py_DECREF(all);
      return NULL;
    }
    if (err < 0) {
      Py_DECREF(all);
      return gpujit_py_raise(err);
    }
    l = result_list(r, nr);
    gpujit_free(r);
    if (!l) {
      Py_DECREF(all);
      return NULL;
    }
    for (Py_ssize_t j = 0; j < PyList_Size(l); j++)
      PyList_Append(all, PyList_GetItem(l, j));
    Py_DECREF(l);
  }
  return all;
}

static void capture_free(PyObject *cap)
{
  gpujit_capture *c = PyCapsule_GetPointer(cap, "gpujit.capture");
  gpujit_timing_result *r = NULL;
  size_t n = 0;
  if (c && gpujit_capture_end(c, &r, &n, NULL) == 0)
    gpujit_free(r);
  PyErr_Clear();
  gpujit_error_clear();
}

/* capture_begin(filter) -> (handle, ordinals): every framework's GPU work from now, on every
 * device; and the kernel regions of the devices gpujit has opened (those it reads, in its windows). */
static PyObject *capture_begin(PyObject *self, PyObject *args)
{
  gpujit_device *devs[MAX_OPEN], *joined[MAX_OPEN];
  gpujit_capture *c = NULL;
  unsigned filter;
  size_t n, k = 0;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "I", &filter))
    return NULL;
  if ((err = gpujit_capture_begin(&c, filter)) < 0)
    return gpujit_py_raise(err);
  n = gpujit_py_open_devices(devs, MAX_OPEN);
  for (size_t i = 0; i < n; i++) /* a device whose hooks another layer holds reads none */
    if (gpujit_capture_regions(c, devs[i]) >= 0)
      joined[k++] = devs[i];
  gpujit_error_clear();
  return Py_BuildValue("(NN)", PyCapsule_New(c, "gpujit.capture", capture_free), ordinal_list(joined, k));
}

/* regions_window_begin() -> ordinals: a kernel-regions window on every device gpujit has opened
 * (none is opened for it: a device gpujit never used ran no module of its). */
static PyObject *regions_window_begin(PyObject *self, PyObject *unused)
{
  gpujit_device *devs[MAX_OPEN], *joined[MAX_OPEN];
  size_t n = gpujit_py_open_devices(devs, MAX_OPEN), k = 0;
  (void)self, (void)unused;
  for (size_t i = 0; i < n; i++)
    if (gpujit_timing_regions_begin(devs[i]) >= 0)
      joined[k++] = devs[i];
  gpujit_error_clear();
  return ordinal_list(joined, k);
}

/* regions_window_end(ordinals) -> None: close the windows regions_window_begin opened; the first
 * error is raised once every window is closed. */
static PyObject *regions_window_end(PyObject *self, PyObject *ordinals)
{
  int err = 0;
  (void)self;
  if (!PyList_Check(ordinals)) {
    PyErr_SetString(PyExc_TypeError, "regions_window_end takes the list regions_window_begin gave");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < PyList_Size(ordinals); i++) {
    int ordinal = (int)PyLong_AsLong(PyList_GetItem(ordinals, i)), e;
    gpujit_device *dev = ordinal == -1 && PyErr_Occurred() ? NULL : gpujit_py_device(ordinal);
    if (!dev)
      return NULL;
    /* the GIL held: another thread's launch on the device would touch the windows being read */
    e = gpujit_timing_regions_end(dev);
    if (e < 0 && err == 0)
      err = e;
  }
  if (err < 0)
    return gpujit_py_raise(err);
  Py_RETURN_NONE;
}

/* capture_end(handle) -> ([result tuples], lost) */
static PyObject *capture_end(PyObject *self, PyObject *cap)
{
  gpujit_capture *c = PyCapsule_GetPointer(cap, "gpujit.capture");
  gpujit_timing_result *r = NULL;
  size_t n = 0;
  uint64_t lost = 0;
  PyObject *l;
  int err;
  (void)self;
  if (!c)
    return NULL;
  PyCapsule_SetName(cap, "gpujit.capture.done");
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_capture_end(c, &r, &n, &lost);
  Py_END_ALLOW_THREADS;
  if (err < 0)
    return gpujit_py_raise(err);
  l = result_list(r, n);
  gpujit_free(r);
  return l ? Py_BuildValue("(NK)", l, (unsigned long long)lost) : NULL;
}

/* timing_format(results, sections) -> str: the C layer's tables. */
static PyObject *timing_format(PyObject *self, PyObject *args)
{
  PyObject *l, *out;
  unsigned sections;
  gpujit_timing_result *r;
  Py_ssize_t n;
  char *text = NULL;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "O!I", &PyList_Type, &l, &sections))
    return NULL;
  n = PyList_Size(l);
  if (!(r = calloc((size_t)n + 1, sizeof(*r))))
    return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *d = PyList_GetItem(l, i), *name = PyDict_Check(d) ? PyDict_GetItemString(d, "name") : NULL,
             *b = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8String(name) : NULL;
    double device, kind, bytes, node, missing;
    if (!b || field(d, "device", &device) < 0 || field(d, "kind", &kind) < 0 ||
        field(d, "elapsed_ms", &r[i].elapsed_ms) < 0 || field(d, "start_us", &r[i].start_us) < 0 ||
        field(d, "host_us", &r[i].host_us) < 0 || field(d, "launch_us", &r[i].launch_us) < 0 ||
        field(d, "bytes", &bytes) < 0 || field(d, "graph_node", &node) < 0 || field(d, "missing", &missing) < 0) {
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "a timing result needs 'name' (str)");
      Py_XDECREF(b);
      free(r);
      return NULL;
    }
    snprintf(r[i].name, sizeof(r[i].name), "%s", PyBytes_AsString(b));
    Py_DECREF(b);
    r[i].device = (int)device;
    r[i].kind = (gpujit_activity_kind)(int)kind;
    r[i].bytes = (uint64_t)bytes;
    r[i].graph_node = (uint64_t)node;
    r[i].missing = missing != 0;
    r[i].order = (uint64_t)i;
  }
  err = gpujit_timing_format(&text, r, (size_t)n, sections);
  free(r);
  if (err < 0)
    return gpujit_py_raise(err);
  out = PyUnicode_FromString(text);
  gpujit_free(text);
  return out;
}

typedef struct call {
  PyObject *fn, *args, *kwargs;
  int failed;
} call;

static int call_fn(void *payload)
{
  call *c = payload;
  PyObject *r = PyObject_Call(c->fn, c->args, c->kwargs);
  if (!r) {
    c->failed = 1;
    return GPUJIT_ECANCELLED;
  }
  Py_DECREF(r);
  return 0;
}

static PyObject *stats_dict(const gpujit_stats *s)
{
  return Py_BuildValue("{s:n,s:d,s:d,s:d,s:d,s:d,s:d}", "n", (Py_ssize_t)s->n, "min", s->min, "median", s->median,
                       "mean", s->mean, "max", s->max, "stdev", s->stdev, "noise", s->noise);
}

static PyObject *samples_list(const double *s, size_t n)
{
  PyObject *l = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; l && i < n; i++) {
    PyObject *v = PyFloat_FromDouble(s[i]);
    if (!v) {
      Py_CLEAR(l);
      break;
    }
    PyList_SetItem(l, (Py_ssize_t)i, v);
  }
  return l;
}

/* benchmark(fn, args, kwargs, devices, warmup, min_samples, max_samples, min_time_s, timeout_s,
 *           max_noise, l2_flush) -> {"stop", "elapsed_s", "cpu": stats, "cpu_times": [...],
 *           "devices": [(ordinal, stats, [...])]} */
static PyObject *benchmark(PyObject *self, PyObject *args)
{
  gpujit_bench_options o = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit_bench_result res[GPUJIT_BENCH_MAX_DEVICES];
  gpujit_device *devs[GPUJIT_BENCH_MAX_DEVICES];
  int ordinals[GPUJIT_BENCH_MAX_DEVICES];
  PyObject *devices_o, *out = NULL, *per = NULL;
  double *samples = NULL;
  call c = {NULL, NULL, NULL, 0};
  Py_ssize_t ndev;
  int l2 = 0, err;
  size_t n;
  (void)self;
  if (!PyArg_ParseTuple(args, "OO!OOIIIddd" "p", &c.fn, &PyTuple_Type, &c.args, &c.kwargs, &devices_o, &o.warmup,
                        &o.min_samples, &o.max_samples, &o.min_time_s, &o.timeout_s, &o.max_noise, &l2))
    return NULL;
  if (c.kwargs == Py_None)
    c.kwargs = NULL;
  o.l2_flush = l2;
  if (!PyList_Check(devices_o) || (ndev = PyList_Size(devices_o)) < 1 || ndev > GPUJIT_BENCH_MAX_DEVICES) {
    PyErr_Format(PyExc_ValueError, "devices must list 1 to %d device ordinals", GPUJIT_BENCH_MAX_DEVICES);
    return NULL;
  }
  for (Py_ssize_t i = 0; i < ndev; i++) {
    ordinals[i] = (int)PyLong_AsLong(PyList_GetItem(devices_o, i));
    if ((ordinals[i] == -1 && PyErr_Occurred()) || !(devs[i] = gpujit_py_device(ordinals[i])))
      return NULL;
  }
  err = gpujit_benchmark_devices(res, &samples, devs, (size_t)ndev, call_fn, &c, &o);
  if (c.failed) { /* fn raised: that exception, not the C layer's */
    gpujit_error_clear();
    gpujit_free(samples);
    return NULL;
  }
  if (err < 0)
    return gpujit_py_raise(err);
  n = res[0].gpu.n;
  if (!(per = PyList_New(0)))
    goto done;
  for (Py_ssize_t i = 0; i < ndev; i++) {
    PyObject *row = Py_BuildValue("(iNN)", ordinals[i], stats_dict(&res[i].gpu), samples_list(samples + (i + 1) * n, n));
    if (!row || PyList_Append(per, row) < 0) {
      Py_XDECREF(row);
      goto done;
    }
    Py_DECREF(row);
  }
  out = Py_BuildValue("{s:s,s:d,s:N,s:N,s:O}", "stop",
                      res[0].stop == GPUJIT_BENCH_STOP_NOISE     ? "noise"
                      : res[0].stop == GPUJIT_BENCH_STOP_TIMEOUT ? "timeout"
                                                                 : "max_samples",
                      "elapsed_s", res[0].elapsed_s, "cpu", stats_dict(&res[0].cpu), "cpu_times", samples_list(samples, n),
                      "devices", per);
done:
  Py_XDECREF(per);
  gpujit_free(samples);
  return out;
}

static PyMethodDef methods[] = {
    {"synchronize", synchronize, METH_NOARGS, "Wait for every device gpujit opened and the current one."},
    {"current_device", current_device, METH_NOARGS, "The device gpujit launches on now."},
    {"nvtx_push", nvtx_push, METH_VARARGS, "Open an NVTX range; returns its handle."},
    {"nvtx_pop", nvtx_pop, METH_O, "Close the NVTX range of a handle."},
    {"timing_begin", timing_begin, METH_VARARGS, "Open a timed region on gpujit's devices."},
    {"timing_end", timing_end, METH_O, "Close the timed region: its results."},
    {"capture_begin", capture_begin, METH_VARARGS, "Start a process-wide CUPTI capture: (handle, ordinals)."},
    {"regions_window_begin", regions_window_begin, METH_NOARGS, "Open kernel-regions windows: ordinals."},
    {"regions_window_end", regions_window_end, METH_O, "Close the kernel-regions windows of the ordinals."},
    {"capture_end", capture_end, METH_O, "End a capture: (results, lost)."},
    {"timing_format", timing_format, METH_VARARGS, "The timeline, activity and device tables of results."},
    {"benchmark", benchmark, METH_VARARGS, "Benchmark a callable (see gpujit.benchmark)."},
    {NULL, NULL, 0, NULL},
};

int gpujit_py_add_timing(PyObject *m) { return PyModule_AddFunctions(m, methods); }
