/* config() -> what gpujit builds and runs with, as `gpujit version --json` says it: the toolkit,
 * NVRTC, nvJitLink, ptxas, CUPTI, the driver (or why there is none) and the default cache. */
#include "ext.h"

#include <stdio.h>
#include <string.h>

static const char *origin_key(gpujit_toolkit_origin o)
{
  switch (o) {
  case GPUJIT_TOOLKIT_CUDA_PATH: return "CUDA_PATH";
  case GPUJIT_TOOLKIT_CUDA_HOME: return "CUDA_HOME";
  case GPUJIT_TOOLKIT_PIP: return "pip";
  default: return "default";
  }
}

static PyObject *lib(const char *path, const int v[2], int from_env, const char *problem)
{
  if (problem)
    return Py_BuildValue("{szszsO}", "version", NULL, "path", NULL, "from_env", from_env ? Py_True : Py_False);
  PyObject *ver = PyUnicode_FromFormat("%d.%d", v[0], v[1]);
  PyObject *d = ver ? Py_BuildValue("{sOszsO}", "version", ver, "path", path, "from_env", from_env ? Py_True : Py_False)
                    : NULL;
  Py_XDECREF(ver);
  return d;
}

static PyObject *cache_part(void)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *c = NULL;
  char *dir = NULL;
  const char *source = "default", *limit_source = "none";
  uint64_t bytes = 0;
  PyObject *d;
  if (gpujit_cache_default_dir(&dir, &source) < 0)
    dir = NULL;
  co.dir = dir;
  if (dir && gpujit_cache_open_existing(&c, &co) == 0 && gpujit_cache_limit_get(c, &bytes, &limit_source) < 0)
    bytes = 0;
  gpujit_cache_free(c);
  gpujit_error_clear();
  d = Py_BuildValue("{szsssKss}", "path", dir, "path_source", !strcmp(source, "HOME") ? "default" : source,
                    "limit_bytes", (unsigned long long)bytes, "limit_source",
                    !strcmp(limit_source, "none") ? "default" : limit_source);
  gpujit_free(dir);
  return d;
}

static PyObject *config(PyObject *self, PyObject *unused)
{
  gpujit_toolkit_info tk;
  int nvrtc[2] = {0, 0}, link[2] = {0, 0}, driver = 0, devices = 0, derr;
  const char *problem = NULL;
  char tk_problem[1024] = "", drv_problem[1024] = "";
  PyObject *out = NULL, *t = NULL, *n = NULL, *l = NULL, *d = NULL, *c = NULL;
  (void)self, (void)unused;
  Py_BEGIN_ALLOW_THREADS; /* loads NVRTC, nvJitLink and the driver */
  gpujit_toolkit_info_get(&tk);
  if (tk.problem)
    snprintf(tk_problem, sizeof(tk_problem), "%s", tk.problem);
  else if (gpujit_toolkit_versions(&nvrtc[0], &nvrtc[1], &link[0], &link[1]) < 0)
    snprintf(tk_problem, sizeof(tk_problem), "%s", gpujit_error_last());
  if ((derr = gpujit_driver_version(&driver, &devices)) < 0)
    snprintf(drv_problem, sizeof(drv_problem), "%s", gpujit_error_last());
  gpujit_error_clear();
  Py_END_ALLOW_THREADS;
  problem = *tk_problem ? tk_problem : NULL;
  if (!(t = Py_BuildValue("{szssss}", "root", tk.root, "origin", origin_key(tk.origin), "problem", problem)) ||
      !(n = lib(tk.nvrtc, nvrtc, tk.nvrtc_from_env, problem)) ||
      !(l = lib(tk.nvjitlink, link, tk.nvjitlink_from_env, problem)) || !(c = cache_part()))
    goto done;
  if (derr < 0)
    d = Py_BuildValue("{szsiss}", "version", NULL, "devices", 0, "problem", drv_problem);
  else {
    PyObject *ver = PyUnicode_FromFormat("%d.%d", driver / 1000, driver % 1000 / 10);
    d = ver ? Py_BuildValue("{sOsisz}", "version", ver, "devices", devices, "problem", NULL) : NULL;
    Py_XDECREF(ver);
  }
  if (d)
    out = Py_BuildValue("{sssOsOsOszszsOsO}", "gpujit", gpujit_version(), "toolkit", t, "nvrtc", n, "nvjitlink", l,
                        "ptxas", tk.ptxas, "cupti", tk.cupti, "driver", d, "cache", c);
done:
  Py_XDECREF(t), Py_XDECREF(n), Py_XDECREF(l), Py_XDECREF(d), Py_XDECREF(c);
  return out;
}

static PyMethodDef methods[] = {
    {"config", config, METH_NOARGS, "What gpujit builds and runs with (gpujit version --json's keys)."},
    {NULL, NULL, 0, NULL},
};

int gpujit_py_add_config(PyObject *m) { return PyModule_AddFunctions(m, methods); }
