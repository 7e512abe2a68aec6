/* The process's devices as the extension uses them: each opened once, issuing on CUDA's legacy
 * default stream; the current one is the current CUDA context's (CuPy's or PyTorch's). */
#include "ext.h"

#include <stdlib.h>

static gpujit_device *devices[GPUJIT_PY_MAX_DEVICES];

gpujit_device *gpujit_py_device(int ordinal)
{
  int err;
  if (ordinal < 0 || ordinal >= GPUJIT_PY_MAX_DEVICES) {
    PyErr_Format(PyExc_ValueError, "device %d: gpujit handles devices 0 to %d", ordinal, GPUJIT_PY_MAX_DEVICES - 1);
    return NULL;
  }
  if (!devices[ordinal]) {
    gpujit_device *d = NULL;
    if ((err = gpujit_device_open(&d, ordinal)) < 0 || (err = gpujit_device_set_stream(d, GPUJIT_STREAM_LEGACY)) < 0) {
      gpujit_device_free(d);
      gpujit_py_raise(err);
      return NULL;
    }
    devices[ordinal] = d;
  }
  return devices[ordinal];
}

gpujit_device *gpujit_py_current_device(int *ordinal)
{
  int cur = -1, err;
  if ((err = gpujit_device_current(&cur)) < 0) {
    gpujit_py_raise(err);
    return NULL;
  }
  if (cur < 0) { /* no framework made a context current: gpujit's default device */
    const char *env = getenv("GPUJIT_DEVICE");
    cur = env && *env ? atoi(env) : 0;
  }
  *ordinal = cur;
  return gpujit_py_device(cur);
}

size_t gpujit_py_open_devices(gpujit_device **out, size_t max)
{
  size_t n = 0;
  for (int i = 0; i < GPUJIT_PY_MAX_DEVICES && n < max; i++)
    if (devices[i])
      out[n++] = devices[i];
  return n;
}

