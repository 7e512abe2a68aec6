/* gpujit.profile for Python: a range of the profile that `gpujit profile` records of this
 * process, read back as the report's text and JSON. */
#include "ext.h"

#include <stdlib.h>

/* recording() -> the records directory when this process runs under `gpujit profile`, else None */
static PyObject *recording(PyObject *self, PyObject *unused)
{
  const char *dir = NULL;
  (void)self, (void)unused;
  if (!gpujit_profile_recording(&dir))
    Py_RETURN_NONE;
  return PyUnicode_FromString(dir);
}

/* profile_range(dir, pid, t0_ns, t1_ns, title, top, trace_path) -> (text, json) */
static PyObject *profile_range(PyObject *self, PyObject *args)
{
  const char *dir, *title, *trace = NULL;
  int pid, err;
  unsigned long long t0, t1;
  long top;
  gpujit_profile *p = NULL;
  char *text = NULL, *json = NULL;
  PyObject *res = NULL;
  (void)self;
  if (!PyArg_ParseTuple(args, "siKKslz", &dir, &pid, &t0, &t1, &title, &top, &trace))
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  err = gpujit_profile_load_range(&p, dir, pid, t0, t1);
  if (err == 0)
    err = gpujit_profile_format(p, title, top, &text);
  if (err == 0)
    err = gpujit_profile_json(p, &json);
  if (err == 0 && trace)
    err = gpujit_profile_trace(p, trace);
  Py_END_ALLOW_THREADS;
  if (err < 0)
    gpujit_py_raise(err);
  else
    res = Py_BuildValue("(ss)", text, json);
  gpujit_free(text);
  gpujit_free(json);
  gpujit_profile_free(p);
  return res;
}

static PyMethodDef methods[] = {
    {"profile_recording", recording, METH_NOARGS, "The records directory of `gpujit profile`, or None."},
    {"profile_range", profile_range, METH_VARARGS, "A range of this process's profile: (text, json)."},
    {NULL, NULL, 0, NULL},
};

int gpujit_py_add_profile(PyObject *m) { return PyModule_AddFunctions(m, methods); }
