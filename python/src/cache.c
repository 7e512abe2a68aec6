/* The kernel cache: counters and disk use, clearing, the size limit, export and import (the
 * CLI's `gpujit cache` commands); disk work with the GIL released. */
#include "ext.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The cache at `dir` (NULL: the default), opened; NULL with an exception set. `existing`: one
 * that is there already (nothing is made in a missing or foreign directory). */
static gpujit_cache *open_cache(const char *dir, bool existing)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *cache = NULL;
  int err;
  co.dir = dir;
  Py_BEGIN_ALLOW_THREADS; /* opening may make the cache's directories */
  err = existing ? gpujit_cache_open_existing(&cache, &co) : gpujit_cache_open(&cache, &co);
  Py_END_ALLOW_THREADS;
  if (err < 0) {
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
  Py_BEGIN_ALLOW_THREADS; /* the stats file, the disk use */
  err = gpujit_cache_stats_get(cache, &s);
  if (err == 0)
    err = gpujit_cache_limit_get(cache, &limit, &source);
  Py_END_ALLOW_THREADS;
  if (err < 0) {
    gpujit_cache_free(cache);
    return gpujit_py_raise(err);
  }
  /* the keys and meaning of `gpujit cache stats --json` (docs/json.md), hit_rate None before a lookup */
  d = Py_BuildValue("{s:s,s:K,s:K,s:K,s:K,s:K,s:N,s:K,s:K,s:d,s:K}", "path", gpujit_cache_path(cache), "entries",
                    (unsigned long long)s.entries, "bytes", (unsigned long long)s.bytes, "hits",
                    (unsigned long long)s.hits, "misses", (unsigned long long)s.misses, "uncacheable",
                    (unsigned long long)s.uncacheable, "hit_rate",
                    s.hits + s.misses ? PyFloat_FromDouble((double)s.hits / (double)(s.hits + s.misses))
                                      : (Py_INCREF(Py_None), Py_None),
                    "stores", (unsigned long long)s.stores, "corrupt", (unsigned long long)s.corrupt,
                    "compile_ms_saved", s.compile_ms_saved, "limit_bytes", (unsigned long long)limit);
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
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_cache_clear(cache, &removed);
  Py_END_ALLOW_THREADS;
  if (err < 0) {
    gpujit_cache_free(cache);
    return gpujit_py_raise(err);
  }
  gpujit_cache_free(cache);
  return PyLong_FromUnsignedLongLong(removed);
}

/* cache_limit(dir, size or None) -> (bytes, source, evicted, evicted_bytes): set it when given
 * ("5" is 5 GiB, "2GB", "none": gpujit_cache_parse_size), then read it */
static PyObject *cache_limit(PyObject *self, PyObject *args)
{
  const char *dir = NULL, *size = NULL, *source = NULL;
  gpujit_cache *cache;
  uint64_t bytes = 0, removed = 0, freed = 0;
  int err = 0;
  (void)self;
  if (!PyArg_ParseTuple(args, "zz", &dir, &size) || !(cache = open_cache(dir, false)))
    return NULL;
  if (size && (err = gpujit_cache_parse_size(size, &bytes)) == 0) {
    Py_BEGIN_ALLOW_THREADS; /* setting a limit evicts down to it */
    err = gpujit_cache_limit_set(cache, bytes, &removed, &freed);
    Py_END_ALLOW_THREADS;
  }
  if (size && err < 0) {
    gpujit_cache_free(cache);
    return gpujit_py_raise(err);
  }
  if ((err = gpujit_cache_limit_get(cache, &bytes, &source)) < 0) {
    gpujit_cache_free(cache);
    return gpujit_py_raise(err);
  }
  gpujit_cache_free(cache);
  return Py_BuildValue("(KsKK)", (unsigned long long)bytes, source ? source : "", (unsigned long long)removed,
                       (unsigned long long)freed);
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

static PyMethodDef methods[] = {
    {"cache_stats", cache_stats, METH_VARARGS, "The cache's counters and disk use."},
    {"cache_clear", cache_clear, METH_VARARGS, "Remove every cache entry."},
    {"cache_limit", cache_limit, METH_VARARGS, "Set and read the cache's size limit."},
    {"cache_export", cache_export, METH_VARARGS, "Export cache entries to an archive."},
    {"cache_import", cache_import, METH_VARARGS, "Import an exported archive."},
    {NULL, NULL, 0, NULL},
};

int gpujit_py_add_cache(PyObject *m)
{
  return PyModule_AddFunctions(m, methods);
}
