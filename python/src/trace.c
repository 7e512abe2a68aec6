/* Compile-time traces: analysis across files and two sets compared (gpujit trace analyze and
 * diff), their tables as lists of dicts. */
#include "ext.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
  if (gpujit_py_str_list(paths_o, "paths", &paths, &n, &keep) < 0) {
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

static PyMethodDef methods[] = {
    {"analyze", analyze, METH_VARARGS, "Analyze trace files (see gpujit.trace.analyze)."},
    {"diff", diff, METH_VARARGS, "Compare two sets of traces (see gpujit.trace.diff)."},
    {NULL, NULL, 0, NULL},
};

int gpujit_py_add_trace(PyObject *m)
{
  return PyModule_AddFunctions(m, methods);
}
