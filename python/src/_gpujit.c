/*
 * gpujit's Python extension: the public C API (include/gpujit.h) under CPython's limited API, so
 * one abi3 wheel serves every Python from 3.9. Nothing is implemented twice: each function turns
 * Python arguments into the C API's, calls it, and turns the answer into plain Python objects;
 * the package (python/gpujit) gives them their classes and exceptions.
 *
 * Errors raise _gpujit.Error(code, name, message, log): the C error code, its symbolic name
 * ("GPUJIT_ECOMPILE"), gpujit_error_last() and, for compiles, the diagnostics.
 */
#include <stdbool.h>

#include "ext.h"

#include <stdlib.h>
#include <string.h>

PyObject *gpujit_py_handle_new(gpujit_module *m); /* launch.c */

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
static int str_list(PyObject *o, const char *what, const char ***out, size_t *n, PyObject **keep)
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

static PyObject *str_or_none(const char *s)
{
  if (s)
    return PyUnicode_FromString(s);
  Py_INCREF(Py_None);
  return Py_None;
}

/* What a built module is, as a dict for python/gpujit/module.py. */
static PyObject *module_dict(gpujit_module *m)
{
  PyObject *d = PyDict_New(), *kernels = NULL, *lowered = NULL;
  gpujit_module_timings t;
  gpujit_module_lean lean;
  size_t size = 0;
  const void *image = gpujit_module_image(m, &size);
  gpujit_cache_status cs = gpujit_module_cache_status(m);
  if (!d)
    return NULL;
  gpujit_module_timings_get(m, &t);
  gpujit_module_lean_get(m, &lean);
  if (!(kernels = PyList_New(0)) || !(lowered = PyDict_New()))
    goto fail;
  for (size_t i = 0; i < gpujit_module_kernel_count(m); i++) {
    PyObject *k = PyUnicode_FromString(gpujit_module_kernel(m, i));
    if (!k || PyList_Append(kernels, k) < 0) {
      Py_XDECREF(k);
      goto fail;
    }
    Py_DECREF(k);
  }
  for (size_t i = 0; i < gpujit_module_name_expression_count(m); i++) {
    const char *low = NULL, *expr = gpujit_module_name_expression(m, i, &low);
    if (gpujit_py_set_item(lowered, expr, str_or_none(low)) < 0)
      goto fail;
  }
  if (gpujit_py_set_item(d, "name", PyUnicode_FromString(gpujit_module_name(m))) < 0 ||
      gpujit_py_set_item(d, "arch", PyUnicode_FromString(gpujit_module_arch(m))) < 0 ||
      gpujit_py_set_item(d, "output", PyUnicode_FromString(gpujit_output_kind_name(gpujit_module_output(m)))) < 0 ||
      gpujit_py_set_item(d, "image", PyBytes_FromStringAndSize(image, (Py_ssize_t)size)) < 0 ||
      gpujit_py_set_item(d, "log", PyUnicode_FromString(gpujit_module_log(m))) < 0 ||
      gpujit_py_set_item(d, "cache",
               PyUnicode_FromString(cs == GPUJIT_CACHE_HIT    ? "hit"
                                    : cs == GPUJIT_CACHE_MISS ? "miss"
                                                              : "none")) < 0 ||
      gpujit_py_set_item(d, "compile_ms", PyFloat_FromDouble(t.compile_ms)) < 0 ||
      gpujit_py_set_item(d, "link_ms", PyFloat_FromDouble(t.link_ms)) < 0 ||
      gpujit_py_set_item(d, "total_ms", PyFloat_FromDouble(t.total_ms)) < 0 ||
      gpujit_py_set_item(d, "saved_ms", PyFloat_FromDouble(t.saved_ms)) < 0 ||
      gpujit_py_set_item(d, "lean", PyBool_FromLong(lean.applied)) < 0 ||
      gpujit_py_set_item(d, "cache_key", str_or_none(gpujit_module_cache_key(m))) < 0 ||
      PyDict_SetItemString(d, "kernels", kernels) < 0 || PyDict_SetItemString(d, "lowered", lowered) < 0)
    goto fail;
  Py_DECREF(kernels);
  Py_DECREF(lowered);
  return d;
fail:
  Py_XDECREF(kernels);
  Py_XDECREF(lowered);
  Py_DECREF(d);
  return NULL;
}

/* build(paths, sources, name, arch, options, defines, include_dirs, name_expressions, cache,
 *       cache_dir, time_trace, lean) -> dict
 * paths: list of files, or None; sources: list of (name, text) pairs, or None. */
static PyObject *build(PyObject *self, PyObject *args)
{
  PyObject *paths_o, *sources_o, *options_o, *defines_o, *incs_o, *exprs_o, *result = NULL;
  PyObject *keep[5] = {NULL, NULL, NULL, NULL, NULL};
  const char *arch = NULL, *cache_dir = NULL, *time_trace = NULL;
  int use_cache = 1, lean = 1, err;
  const char **paths = NULL, **options = NULL, **defines = NULL, **incs = NULL, **exprs = NULL;
  size_t npaths = 0, nsources = 0;
  gpujit_source *sources = NULL;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
  gpujit_cache *cache = NULL;
  gpujit_trace *trace = NULL;
  gpujit_module *m = NULL;
  (void)self;
  if (!PyArg_ParseTuple(args, "OOzOOOOpzzp", &paths_o, &sources_o, &arch, &options_o, &defines_o, &incs_o, &exprs_o,
                        &use_cache, &cache_dir, &time_trace, &lean))
    return NULL;
  if (str_list(paths_o, "paths", &paths, &npaths, &keep[0]) < 0 ||
      str_list(options_o, "options", &options, &o.nvrtc_options_count, &keep[1]) < 0 ||
      str_list(defines_o, "defines", &defines, &o.defines_count, &keep[2]) < 0 ||
      str_list(incs_o, "include_dirs", &incs, &o.include_dirs_count, &keep[3]) < 0 ||
      str_list(exprs_o, "name_expressions", &exprs, &o.name_expressions_count, &keep[4]) < 0)
    goto done;
  if (sources_o != Py_None) {
    Py_ssize_t n = PyList_Check(sources_o) ? PyList_Size(sources_o) : -1;
    if (n < 0) {
      PyErr_SetString(PyExc_TypeError, "sources must be a list of (name, text) pairs");
      goto done;
    }
    if (!(sources = calloc((size_t)n + 1, sizeof(*sources)))) {
      PyErr_NoMemory();
      goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      Py_ssize_t size = 0;
      if (!PyArg_ParseTuple(PyList_GetItem(sources_o, i), "ss#", &sources[i].name, &sources[i].data, &size))
        goto done;
      sources[i].size = (size_t)size;
    }
    nsources = (size_t)n;
  }
  o.arch = arch;
  o.nvrtc_options = options;
  o.defines = defines;
  o.include_dirs = incs;
  o.name_expressions = exprs;
  o.lean = lean;
  Py_BEGIN_ALLOW_THREADS;
  err = 0;
  if (use_cache) {
    co.dir = cache_dir;
    err = gpujit_cache_open(&cache, &co);
    o.cache = cache;
  }
  if (err == 0 && time_trace)
    err = gpujit_trace_create(&trace, &to);
  o.trace = trace;
  if (err == 0)
    err = sources ? gpujit_module_build_sources(&m, sources, nsources, &o)
                  : gpujit_module_build_files(&m, paths, npaths, &o);
  if (err == 0 && trace)
    err = gpujit_trace_write(trace, time_trace);
  Py_END_ALLOW_THREADS;
  if (err < 0) {
    gpujit_py_raise(err);
  } else if ((result = module_dict(m))) {
    PyObject *h = gpujit_py_handle_new(m); /* the handle owns the module now */
    if (h)
      m = NULL;
    if (gpujit_py_set_item(result, "handle", h) < 0)
      Py_CLEAR(result);
  }
done:
  gpujit_module_free(m);
  gpujit_trace_free(trace);
  gpujit_cache_free(cache);
  free(paths), free(options), free(defines), free(incs), free(exprs), free(sources);
  for (int i = 0; i < 5; i++)
    Py_XDECREF(keep[i]);
  return result;
}

/* The cache at `dir` (NULL: the default), opened; NULL with an exception set. `existing`: one
 * that is there already (nothing is made in a missing or foreign directory). */
static gpujit_cache *open_cache(const char *dir, bool existing)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *cache = NULL;
  int err;
  co.dir = dir;
  if ((err = existing ? gpujit_cache_open_existing(&cache, &co) : gpujit_cache_open(&cache, &co)) < 0) {
    gpujit_cache_free(cache);
    gpujit_py_raise(err);
    return NULL;
  }
  return cache;
}

/* cache_stats(dir) -> dict */
static PyObject *cache_stats(PyObject *self, PyObject *args)
{
  const char *dir = NULL;
  gpujit_cache *cache;
  gpujit_cache_stats s;
  uint64_t limit = 0;
  const char *source = NULL;
  PyObject *d;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "z", &dir) || !(cache = open_cache(dir, true)))
    return NULL;
  if ((err = gpujit_cache_stats_get(cache, &s)) < 0 || (err = gpujit_cache_limit_get(cache, &limit, &source)) < 0) {
    gpujit_cache_free(cache);
    return gpujit_py_raise(err);
  }
  d = Py_BuildValue("{s:s,s:K,s:K,s:K,s:K,s:K,s:K,s:d,s:K}", "path", gpujit_cache_path(cache), "entries",
                    (unsigned long long)s.entries, "bytes", (unsigned long long)s.bytes, "hits",
                    (unsigned long long)s.hits, "misses", (unsigned long long)s.misses, "stores",
                    (unsigned long long)s.stores, "corrupt", (unsigned long long)s.corrupt, "compile_ms_saved",
                    s.compile_ms_saved, "limit", (unsigned long long)limit);
  gpujit_cache_free(cache);
  return d;
}

/* cache_clear(dir) -> entries removed */
static PyObject *cache_clear(PyObject *self, PyObject *args)
{
  const char *dir = NULL;
  gpujit_cache *cache;
  uint64_t removed = 0;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "z", &dir) || !(cache = open_cache(dir, true)))
    return NULL;
  if ((err = gpujit_cache_clear(cache, &removed)) < 0) {
    gpujit_cache_free(cache);
    return gpujit_py_raise(err);
  }
  gpujit_cache_free(cache);
  return PyLong_FromUnsignedLongLong(removed);
}

/* cache_limit(dir, size or None) -> (bytes, source): set it when given ("2G", "none"), then read it */
static PyObject *cache_limit(PyObject *self, PyObject *args)
{
  const char *dir = NULL, *size = NULL, *source = NULL;
  gpujit_cache *cache;
  uint64_t bytes = 0;
  int err = 0;
  (void)self;
  if (!PyArg_ParseTuple(args, "zz", &dir, &size) || !(cache = open_cache(dir, false)))
    return NULL;
  if (size && ((err = gpujit_cache_parse_size(size, &bytes)) < 0 || (err = gpujit_cache_limit_set(cache, bytes)) < 0)) {
    gpujit_cache_free(cache);
    return gpujit_py_raise(err);
  }
  if ((err = gpujit_cache_limit_get(cache, &bytes, &source)) < 0) {
    gpujit_cache_free(cache);
    return gpujit_py_raise(err);
  }
  gpujit_cache_free(cache);
  return Py_BuildValue("(Ks)", (unsigned long long)bytes, source ? source : "");
}

/* cache_export(dir, path, used_since) -> entries written */
static PyObject *cache_export(PyObject *self, PyObject *args)
{
  const char *dir = NULL, *path;
  gpujit_cache_export_options o = GPUJIT_CACHE_EXPORT_OPTIONS_INIT;
  gpujit_cache *cache;
  uint64_t n = 0;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "zsd", &dir, &path, &o.used_since) || !(cache = open_cache(dir, true)))
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_cache_export(cache, path, &o, &n);
  Py_END_ALLOW_THREADS;
  gpujit_cache_free(cache);
  return err < 0 ? gpujit_py_raise(err) : PyLong_FromUnsignedLongLong(n);
}

/* cache_import(dir, path) -> {"entries", "present", "manifests", "rejected"} */
static PyObject *cache_import(PyObject *self, PyObject *args)
{
  const char *dir = NULL, *path;
  gpujit_cache *cache;
  gpujit_cache_import_result r = {0, 0, 0, 0};
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "zs", &dir, &path) || !(cache = open_cache(dir, false)))
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_cache_import(cache, path, 0, &r);
  Py_END_ALLOW_THREADS;
  gpujit_cache_free(cache);
  if (err < 0)
    return gpujit_py_raise(err);
  return Py_BuildValue("{s:K,s:K,s:K,s:K}", "entries", (unsigned long long)r.entries, "present",
                       (unsigned long long)r.present, "manifests", (unsigned long long)r.manifests, "rejected",
                       (unsigned long long)r.rejected);
}

/* A dict of every table: {table name: [row(src, table, i) for i < count(src, table)]}. */
static PyObject *tables_of(const void *src, size_t (*count)(const void *, gpujit_trace_table),
                           PyObject *(*row)(const void *, gpujit_trace_table, size_t))
{
  PyObject *tables = PyDict_New();
  for (int t = 0; tables && t < GPUJIT_TRACE_TABLE_COUNT; t++) {
    PyObject *rows = PyList_New(0);
    if (!rows || PyDict_SetItemString(tables, gpujit_trace_table_name((gpujit_trace_table)t), rows) < 0)
      goto fail;
    for (size_t i = 0; i < count(src, (gpujit_trace_table)t); i++) {
      PyObject *r = row(src, (gpujit_trace_table)t, i);
      if (!r || PyList_Append(rows, r) < 0) {
        Py_XDECREF(r);
        goto fail;
      }
      Py_DECREF(r);
    }
    Py_DECREF(rows);
    continue;
  fail:
    Py_XDECREF(rows);
    Py_DECREF(tables);
    return NULL;
  }
  return tables;
}

static size_t stat_count(const void *a, gpujit_trace_table t)
{
  return gpujit_trace_analysis_count(a, t);
}

static PyObject *stat_row(const void *a, gpujit_trace_table t, size_t i)
{
  const gpujit_trace_stat *r = gpujit_trace_analysis_row(a, t, i);
  return Py_BuildValue("(sddK)", r->name, r->total_us, r->max_us, (unsigned long long)r->count);
}

/* An analysis of some paths (a list of str); NULL with an exception set. */
static gpujit_trace_analysis *analysis_of(PyObject *paths_o)
{
  PyObject *keep = NULL;
  const char **paths = NULL;
  size_t n = 0;
  gpujit_trace_analysis *a = NULL;
  int err = 0;
  if (str_list(paths_o, "paths", &paths, &n, &keep) < 0) {
    Py_XDECREF(keep);
    free(paths);
    return NULL;
  }
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_trace_analysis_create(&a);
  for (size_t i = 0; err == 0 && i < n; i++)
    err = gpujit_trace_analysis_add_path(a, paths[i], NULL);
  Py_END_ALLOW_THREADS;
  Py_XDECREF(keep);
  free(paths);
  if (err < 0) {
    gpujit_trace_analysis_free(a);
    gpujit_py_raise(err);
    return NULL;
  }
  return a;
}

/* analyze(paths) -> {"files", "events", "recorded", "unmeasured", "tables": {name: [(name, total_us,
 * max_us, count), ...]}}: gpujit trace analyze over trace files or directories of them. */
static PyObject *analyze(PyObject *self, PyObject *args)
{
  PyObject *paths_o, *tables, *result = NULL;
  size_t files = 0, events = 0, unmeasured = 0, recorded;
  gpujit_trace_analysis *a;
  (void)self;
  if (!PyArg_ParseTuple(args, "O", &paths_o) || !(a = analysis_of(paths_o)))
    return NULL;
  if ((tables = tables_of(a, stat_count, stat_row))) {
    gpujit_trace_analysis_totals(a, &files, &events);
    recorded = gpujit_trace_analysis_recorded(a, &unmeasured);
    result = Py_BuildValue("{s:n,s:n,s:n,s:n,s:O}", "files", (Py_ssize_t)files, "events", (Py_ssize_t)events,
                           "recorded", (Py_ssize_t)recorded, "unmeasured", (Py_ssize_t)unmeasured, "tables", tables);
    Py_DECREF(tables);
  }
  gpujit_trace_analysis_free(a);
  return result;
}

static PyObject *diff_row(const gpujit_trace_diff_row *r)
{
  return Py_BuildValue("{s:s,s:d,s:d,s:d,s:d,s:d,s:d,s:I,s:I,s:d,s:s,s:O}", "name", r->name, "base_ms",
                       r->base_us / 1e3, "new_ms", r->new_us / 1e3, "delta_ms", r->delta_us / 1e3, "delta_pct",
                       r->delta_pct, "base_spread_ms", r->base_spread_us / 1e3, "new_spread_ms", r->new_spread_us / 1e3,
                       "base_samples", r->base_samples, "new_samples", r->new_samples, "p_value", r->p_value, "change",
                       gpujit_trace_change_name(r->change), "regression", r->regression ? Py_True : Py_False);
}

static size_t diff_count(const void *d, gpujit_trace_table t)
{
  return gpujit_trace_diff_count(d, t);
}

static PyObject *diff_row_of(const void *d, gpujit_trace_table t, size_t i)
{
  return diff_row(gpujit_trace_diff_row_at(d, t, i));
}

/* diff(base_paths, new_paths, fail_above_pct, min_ms) -> {"total", "verdict", "tables"} */
static PyObject *diff(PyObject *self, PyObject *args)
{
  PyObject *base_o, *next_o, *tables = NULL, *total = NULL, *result = NULL;
  gpujit_trace_diff_options o = GPUJIT_TRACE_DIFF_OPTIONS_INIT;
  gpujit_trace_analysis *base = NULL, *next = NULL;
  gpujit_trace_diff *d = NULL;
  gpujit_trace_diff_verdict v;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "OOdd", &base_o, &next_o, &o.fail_above_pct, &o.min_ms) ||
      !(base = analysis_of(base_o)) || !(next = analysis_of(next_o)))
    goto done;
  if ((err = gpujit_trace_diff_create(&d, base, next, &o)) < 0 || (err = gpujit_trace_diff_outcome(d, &v)) < 0) {
    gpujit_py_raise(err);
    goto done;
  }
  if (!(tables = tables_of(d, diff_count, diff_row_of)) || !(total = diff_row(gpujit_trace_diff_total(d))))
    goto done;
  result = Py_BuildValue("{s:O,s:O,s:{s:O,s:O,s:O,s:n,s:n,s:n,s:n,s:n,s:n,s:I,s:d}}", "total", total, "tables", tables,
                         "verdict", "gated", v.gated ? Py_True : Py_False, "failed", v.failed ? Py_True : Py_False,
                         "total_regressed", v.total_regressed ? Py_True : Py_False, "regressions",
                         (Py_ssize_t)v.regressions, "slower", (Py_ssize_t)v.slower, "faster", (Py_ssize_t)v.faster,
                         "added", (Py_ssize_t)v.added, "removed", (Py_ssize_t)v.removed, "unmeasured",
                         (Py_ssize_t)v.unmeasured, "min_samples", v.min_samples, "worst_p", v.worst_p);
done:
  Py_XDECREF(tables);
  Py_XDECREF(total);
  gpujit_trace_diff_free(d);
  gpujit_trace_analysis_free(base);
  gpujit_trace_analysis_free(next);
  return result;
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

static PyObject *version(PyObject *self, PyObject *unused)
{
  (void)self, (void)unused;
  return PyUnicode_FromString(gpujit_version());
}

static PyMethodDef methods[] = {
    {"build", build, METH_VARARGS, "Build a module (see gpujit.build)."},
    {"cache_stats", cache_stats, METH_VARARGS, "The cache's counters and disk use."},
    {"cache_clear", cache_clear, METH_VARARGS, "Remove every cache entry."},
    {"analyze", analyze, METH_VARARGS, "Analyze trace files (see gpujit.trace.analyze)."},
    {"diff", diff, METH_VARARGS, "Compare two sets of traces (see gpujit.trace.diff)."},
    {"cache_limit", cache_limit, METH_VARARGS, "Set and read the cache's size limit."},
    {"cache_export", cache_export, METH_VARARGS, "Export cache entries to an archive."},
    {"cache_import", cache_import, METH_VARARGS, "Import an exported archive."},
    {"error_names", error_names, METH_NOARGS, "Every C error code: {code: (name, text)}."},
    {"version", version, METH_NOARGS, "gpujit's version."},
    {"_set_error_classes", set_error_classes, METH_O, "Register the package's exception classes by C code."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_gpujit", "gpujit's C library.", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__gpujit(void);
PyMODINIT_FUNC PyInit__gpujit(void)
{
  PyObject *m = PyModule_Create(&module);
  if (!m)
    return NULL;
  if (!(Error = PyErr_NewException("_gpujit.Error", PyExc_RuntimeError, NULL)))
    goto fail;
  Py_INCREF(Error);
  if (PyModule_AddObject(m, "Error", Error) < 0) {
    Py_DECREF(Error);
    goto fail;
  }
  if (gpujit_py_add_launch(m) < 0 || gpujit_py_add_timing(m) < 0 || gpujit_py_add_profile(m) < 0) {
  fail:
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
