/* gpujit.build: sources or files through the C library's build (the cache, the lean pass), the
 * module as a dict the package turns into a Module, its handle (kernel.c) kept in it. */
#include "ext.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The module's record (gpujit_module_record, the library's one builder: the keys of
 * `gpujit build --json`) into nested dicts. */
typedef struct dict_sink {
  PyObject *open[8]; /* the dicts open, innermost last (borrowed: each is held by its parent) */
  int depth;
} dict_sink;

static PyObject *record_value(gpujit_module_record_kind kind, const gpujit_module_record_value *v)
{
  PyObject *l;
  switch (kind) {
  case GPUJIT_MODULE_RECORD_STRING:
    return PyUnicode_FromString(v->string);
  case GPUJIT_MODULE_RECORD_NUMBER:
    return PyFloat_FromDouble(v->number);
  case GPUJIT_MODULE_RECORD_BOOL:
    return PyBool_FromLong(v->number != 0);
  case GPUJIT_MODULE_RECORD_STRINGS:
    if (!(l = PyList_New(0)))
      return NULL;
    for (size_t i = 0; i < v->count; i++) {
      PyObject *e = PyUnicode_FromString(v->strings[i]);
      if (!e || PyList_Append(l, e) < 0) {
        Py_XDECREF(e);
        Py_DECREF(l);
        return NULL;
      }
      Py_DECREF(e);
    }
    return l;
  default:
    return PyDict_New();
  }
}

static int to_dict(const char *key, gpujit_module_record_kind kind, const gpujit_module_record_value *v, void *payload)
{
  dict_sink *s = payload;
  PyObject *value;
  if (kind == GPUJIT_MODULE_RECORD_END) {
    s->depth -= s->depth > 0;
    return 0;
  }
  if (kind == GPUJIT_MODULE_RECORD_OBJECT && s->depth + 1 >= (int)(sizeof(s->open) / sizeof(s->open[0])))
    return -1;
  if (!(value = record_value(kind, v)) || PyDict_SetItemString(s->open[s->depth], key, value) < 0) {
    Py_XDECREF(value);
    return -1;
  }
  if (kind == GPUJIT_MODULE_RECORD_OBJECT)
    s->open[++s->depth] = value; /* the parent holds it */
  Py_DECREF(value);
  return 0;
}

/* What a built module is, as a dict for python/gpujit/module.py: its record, and what only the
 * extension has — its name, image, log and cache status. */
static PyObject *module_dict(gpujit_module *m)
{
  PyObject *d = PyDict_New();
  dict_sink sink = {{d}, 0};
  size_t size = 0;
  const void *image = gpujit_module_image(m, &size);
  gpujit_cache_status cs = gpujit_module_cache_status(m);
  if (!d)
    return NULL;
  if (gpujit_module_record(m, to_dict, &sink) < 0) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "gpujit_module_record failed");
    goto fail;
  }
  if (gpujit_py_set_item(d, "name", PyUnicode_FromString(gpujit_module_name(m))) < 0 ||
      gpujit_py_set_item(d, "image", PyBytes_FromStringAndSize(image, (Py_ssize_t)size)) < 0 ||
      gpujit_py_set_item(d, "log", PyUnicode_FromString(gpujit_module_log(m))) < 0 ||
      gpujit_py_set_item(d, "cache",
                         PyUnicode_FromString(cs == GPUJIT_CACHE_HIT    ? "hit"
                                              : cs == GPUJIT_CACHE_MISS ? "miss"
                                                                        : "none")) < 0)
    goto fail;
  return d;
fail:
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
  char cwd[4096];
  gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
  gpujit_cache *cache = NULL;
  gpujit_trace *trace = NULL;
  gpujit_module *m = NULL;
  (void)self;
  if (!PyArg_ParseTuple(args, "OOzOOOOpzzp", &paths_o, &sources_o, &arch, &options_o, &defines_o, &incs_o, &exprs_o,
                        &use_cache, &cache_dir, &time_trace, &lean))
    return NULL;
  if (gpujit_py_str_list(paths_o, "paths", &paths, &npaths, &keep[0]) < 0 ||
      gpujit_py_str_list(options_o, "options", &options, &o.nvrtc_options_count, &keep[1]) < 0 ||
      gpujit_py_str_list(defines_o, "defines", &defines, &o.defines_count, &keep[2]) < 0 ||
      gpujit_py_str_list(incs_o, "include_dirs", &incs, &o.include_dirs_count, &keep[3]) < 0 ||
      gpujit_py_str_list(exprs_o, "name_expressions", &exprs, &o.name_expressions_count, &keep[4]) < 0)
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
    const char *base = getenv("GPUJIT_BASE_DIR");
    co.dir = cache_dir;
    /* Source text is named under the working directory (its quote includes resolve there): that
     * directory is its base, so its key, its headers' records and its line table name it
     * relatively — the same text from another directory hits, its headers checked there. */
    if (sources && !(base && *base) && getcwd(cwd, sizeof(cwd)))
      co.base_dir = cwd;
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

static PyMethodDef methods[] = {
    {"build", build, METH_VARARGS, "Build a module (see gpujit.build)."},
    {NULL, NULL, 0, NULL},
};

int gpujit_py_add_build(PyObject *m)
{
  return PyModule_AddFunctions(m, methods);
}
