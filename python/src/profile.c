/* gpujit.profile for Python: a range of the profile that `gpujit profile` records of this
 * process, read back as the report's text and its tables — dicts built from the structs through
 * gpujit_profile_fields(), with the keys `gpujit profile --json` writes. */
#include "ext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* recording() -> the records directory when this process runs under `gpujit profile`, else None */
static PyObject *recording(PyObject *self, PyObject *unused)
{
  const char *dir = NULL;
  (void)self, (void)unused;
  if (!gpujit_profile_recording(&dir))
    Py_RETURN_NONE;
  return PyUnicode_FromString(dir);
}

/* One struct of a table as a dict of its fields. */
static PyObject *row_dict(const gpujit_profile_field *f, size_t nf, const char *row)
{
  PyObject *d = PyDict_New();
  for (size_t i = 0; d && i < nf; i++) {
    const void *v = row + f[i].offset;
    PyObject *o = NULL;
    if (f[i].optional && (f[i].type == GPUJIT_FIELD_STR ? !*(const char *const *)v || !**(const char *const *)v
                                                        : f[i].type == GPUJIT_FIELD_U64 && !*(const uint64_t *)v))
      continue; /* as the JSON: an optional field only when set */
    switch (f[i].type) {
    case GPUJIT_FIELD_STR: {
      const char *s = *(const char *const *)v;
      o = PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)strlen(s ? s : ""), "replace");
      break;
    }
    case GPUJIT_FIELD_INT: o = PyLong_FromLong(*(const int *)v); break;
    case GPUJIT_FIELD_U32: o = PyLong_FromUnsignedLong(*(const uint32_t *)v); break;
    case GPUJIT_FIELD_U64: o = PyLong_FromUnsignedLongLong(*(const uint64_t *)v); break;
    case GPUJIT_FIELD_F64: o = PyFloat_FromDouble(*(const double *)v); break;
    case GPUJIT_FIELD_BOOL: o = PyBool_FromLong(*(const int *)v); break;
    }
    if (!o || gpujit_py_set_item(d, f[i].key, o) < 0)
      Py_CLEAR(d);
  }
  return d;
}

/* The profile's tables and notes as one dict, shaped as its JSON. */
static PyObject *tables(const gpujit_profile *p)
{
  PyObject *data = PyDict_New(), *notes;
  const char *n;
  for (int t = 0; data && t < GPUJIT_PROFILE_NTABLES; t++) {
    const char *name, *rows;
    size_t nf, stride, nrows = gpujit_profile_table_rows(p, (gpujit_profile_table)t, (const void **)&rows, &stride);
    const gpujit_profile_field *f = gpujit_profile_fields((gpujit_profile_table)t, &name, &nf);
    PyObject *v;
    if (t == GPUJIT_PROFILE_TOTALS || t == GPUJIT_PROFILE_OPTIONS)
      v = row_dict(f, nf, rows);
    else {
      v = PyList_New((Py_ssize_t)nrows);
      for (size_t i = 0; v && i < nrows; i++) {
        PyObject *r = row_dict(f, nf, rows + i * stride);
        if (!r)
          Py_CLEAR(v);
        else
          PyList_SetItem(v, (Py_ssize_t)i, r);
      }
    }
    if (!v || gpujit_py_set_item(data, name, v) < 0)
      Py_CLEAR(data);
  }
  if (!data || !(notes = PyList_New(0)))
    goto fail;
  for (n = gpujit_profile_notes(p); *n;) {
    size_t len = strcspn(n, "\n");
    PyObject *line = PyUnicode_DecodeUTF8(n, (Py_ssize_t)len, "replace");
    if (!line || PyList_Append(notes, line) < 0) {
      Py_XDECREF(line), Py_DECREF(notes);
      goto fail;
    }
    Py_DECREF(line);
    n += len + (n[len] == '\n');
  }
  if (gpujit_py_set_item(data, "notes", notes) < 0)
    goto fail;
  return data;
fail:
  Py_XDECREF(data);
  return NULL;
}

static int write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  if (f && fclose(f) != 0)
    ok = 0;
  return ok ? 0 : -1;
}

/* profile_range(dir, pid, t0_ns, t1_ns, title, top, trace_path, json_path) -> (text, data) */
static PyObject *profile_range(PyObject *self, PyObject *args)
{
  const char *dir, *title, *trace = NULL, *json_path = NULL;
  int pid, err, io = 0;
  unsigned long long t0, t1;
  long top;
  gpujit_profile *p = NULL;
  char *text = NULL, *json = NULL;
  PyObject *res = NULL, *data;
  (void)self;
  if (!PyArg_ParseTuple(args, "siKKslzz", &dir, &pid, &t0, &t1, &title, &top, &trace, &json_path))
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_profile_load_range(&p, dir, pid, t0, t1);
  if (err == 0)
    err = gpujit_profile_format(p, title, top, &text);
  if (err == 0 && trace)
    err = gpujit_profile_trace(p, trace);
  if (err == 0 && json_path && (err = gpujit_profile_json(p, &json)) == 0)
    io = write_file(json_path, json);
  Py_END_ALLOW_THREADS;
  if (err < 0)
    gpujit_py_raise(err);
  else if (io < 0)
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, json_path);
  else if ((data = tables(p)) != NULL) {
    res = Py_BuildValue("(sN)", text, data);
  }
  gpujit_free(text);
  gpujit_free(json);
  gpujit_profile_free(p);
  return res;
}

/* profile_open(path, top, trace, json, html, save) -> (text, data): a saved profile or a records
 * directory, as `gpujit profile report` reads it; writes the outputs given. */
static PyObject *profile_open(PyObject *self, PyObject *args)
{
  const char *path, *trace = NULL, *json_path = NULL, *html = NULL, *save = NULL, *failed = NULL;
  int err, io = 0;
  long top;
  gpujit_profile *p = NULL;
  char *text = NULL, *json = NULL;
  PyObject *res = NULL, *data;
  (void)self;
  if (!PyArg_ParseTuple(args, "slzzzz", &path, &top, &trace, &json_path, &html, &save))
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_profile_open(&p, path);
  if (err == 0) {
    const char *command = gpujit_profile_command(p);
    err = gpujit_profile_format(p, command && *command ? command : path, top, &text);
  }
  if (err == 0 && trace && (err = gpujit_profile_trace(p, trace)) != 0)
    failed = trace;
  if (err == 0 && html && (err = gpujit_profile_html(p, html)) != 0)
    failed = html;
  if (err == 0 && save && (err = gpujit_profile_save(p, save)) != 0)
    failed = save;
  if (err == 0 && json_path && (err = gpujit_profile_json(p, &json)) == 0)
    io = write_file(json_path, json);
  Py_END_ALLOW_THREADS;
  (void)failed; /* the error's message names the file */
  if (err < 0)
    gpujit_py_raise(err);
  else if (io < 0)
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, json_path);
  else if ((data = tables(p)) != NULL)
    res = Py_BuildValue("(sN)", text, data);
  gpujit_free(text);
  gpujit_free(json);
  gpujit_profile_free(p);
  return res;
}

/* ---- in-process sessions (gpujit_profile_start/stop): a plain `python app.py` recorded ---- */

#define SESSION_CAPSULE "gpujit.profile_session"
#define PROFILE_CAPSULE "gpujit.profile_data"

static void session_free(PyObject *cap)
{
  gpujit_profile_session_free(PyCapsule_GetPointer(cap, SESSION_CAPSULE));
}

static void profile_free(PyObject *cap)
{
  gpujit_profile_free(PyCapsule_GetPointer(cap, PROFILE_CAPSULE));
}

/* profile_start(steps, schedule, max_events, lineinfo, nvrtc_trace, no_cupti, records_dir)
 *   -> (session, records_dir, injection library) */
static PyObject *profile_start(PyObject *self, PyObject *args)
{
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  gpujit_profile_session *s = NULL;
  unsigned long long budget;
  int lineinfo, trace, no_cupti, err;
  PyObject *cap;
  (void)self;
  if (!PyArg_ParseTuple(args, "zzKpppz", &o.steps, &o.schedule, &budget, &lineinfo, &trace, &no_cupti,
                        &o.records_dir))
    return NULL;
  o.max_trace_events = budget, o.lineinfo = lineinfo, o.nvrtc_trace = trace, o.no_cupti = no_cupti;
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_profile_start(&s, &o);
  Py_END_ALLOW_THREADS;
  if (err < 0)
    return gpujit_py_raise(err);
  if (!(cap = PyCapsule_New(s, SESSION_CAPSULE, session_free))) {
    gpujit_profile_session_free(s);
    return NULL;
  }
  return Py_BuildValue("(Nss)", cap, gpujit_profile_session_dir(s), gpujit_profile_session_inject(s));
}

/* profile_stop(session, title, top) -> (text, data, profile) */
static PyObject *profile_stop(PyObject *self, PyObject *args)
{
  PyObject *cap, *data, *pcap, *res = NULL;
  gpujit_profile_session *s;
  gpujit_profile *p = NULL;
  const char *title;
  char *text = NULL;
  long top;
  int err;
  (void)self;
  if (!PyArg_ParseTuple(args, "Osl", &cap, &title, &top) || !(s = PyCapsule_GetPointer(cap, SESSION_CAPSULE)))
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_profile_stop(s, &p);
  if (err == 0)
    err = gpujit_profile_format(p, title, top, &text);
  Py_END_ALLOW_THREADS;
  if (err < 0) {
    gpujit_profile_free(p);
    return gpujit_py_raise(err);
  }
  if (!(pcap = PyCapsule_New(p, PROFILE_CAPSULE, profile_free))) {
    gpujit_profile_free(p);
    gpujit_free(text);
    return NULL;
  }
  if ((data = tables(p)) != NULL)
    res = Py_BuildValue("(sNN)", text, data, pcap);
  else
    Py_DECREF(pcap);
  gpujit_free(text);
  return res;
}

/* profile_write(profile, what, path): what is "trace", "json", "html" or "save" */
static PyObject *profile_write(PyObject *self, PyObject *args)
{
  PyObject *cap;
  gpujit_profile *p;
  const char *what, *path;
  char *json = NULL;
  int err = 0, io = 0;
  (void)self;
  if (!PyArg_ParseTuple(args, "Oss", &cap, &what, &path) || !(p = PyCapsule_GetPointer(cap, PROFILE_CAPSULE)))
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  if (!strcmp(what, "trace"))
    err = gpujit_profile_trace(p, path);
  else if (!strcmp(what, "html"))
    err = gpujit_profile_html(p, path);
  else if (!strcmp(what, "save"))
    err = gpujit_profile_save(p, path);
  else if ((err = gpujit_profile_json(p, &json)) == 0)
    io = write_file(path, json);
  Py_END_ALLOW_THREADS;
  gpujit_free(json);
  if (err < 0)
    return gpujit_py_raise(err);
  if (io < 0)
    return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"profile_start", profile_start, METH_VARARGS,
     "Record this process in-process (gpujit_profile_start): (session, records_dir, injection library)."},
    {"profile_stop", profile_stop, METH_VARARGS,
     "End an in-process session: (text, tables as dicts, the profile to write from)."},
    {"profile_write", profile_write, METH_VARARGS,
     "Write a stopped session's profile: 'trace', 'json', 'html' or 'save', to a path."},
    {"profile_open", profile_open, METH_VARARGS,
     "A saved profile or records directory: (text, tables as dicts); writes the trace, JSON, HTML and saved files given."},
    {"profile_recording", recording, METH_NOARGS, "The records directory of `gpujit profile`, or None."},
    {"profile_range", profile_range, METH_VARARGS,
     "A range of this process's profile: (text, tables as dicts); writes the trace and JSON files given."},
    {NULL, NULL, 0, NULL},
};

int gpujit_py_add_profile(PyObject *m) { return PyModule_AddFunctions(m, methods); }
