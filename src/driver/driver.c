/* Loading the CUDA driver at run time, translating its errors, and asking a device its arch. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "driver/driver.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static gpujit__driver drv;
static int load_status;
static char load_message[512];

#define GPUJIT__XSTR(x) GPUJIT__STR(x)
#define GPUJIT__STR(x) #x

static void load(void)
{
  const char *lib = getenv("GPUJIT_LIBCUDA");
  void *h;
  CUresult r;
  if (!lib || !*lib)
    lib = "libcuda.so.1";
  if (!(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
    load_status = GPUJIT_ENODRIVER;
    snprintf(load_message, sizeof(load_message),
             "CUDA driver unavailable: cannot load %s (no NVIDIA driver on this machine)", lib);
    return;
  }
#define GPUJIT__LOAD(name)                                                                      \
  if (!(*(void **)&drv.name = dlsym(h, GPUJIT__XSTR(name)))) {                                  \
    load_status = GPUJIT_ENODRIVER;                                                             \
    snprintf(load_message, sizeof(load_message), "CUDA driver too old: no %s", GPUJIT__XSTR(name)); \
    return;                                                                                     \
  }
  GPUJIT__DRIVER_FUNCS(GPUJIT__LOAD)
#undef GPUJIT__LOAD
  if ((r = drv.cuInit(0)) != CUDA_SUCCESS) {
    const char *s = NULL;
    drv.cuGetErrorString(r, &s);
    load_status = r == CUDA_ERROR_NO_DEVICE ? GPUJIT_ENODEVICE : GPUJIT_ENODRIVER;
    snprintf(load_message, sizeof(load_message), "CUDA driver failed to initialise: %s (error %d)",
             s ? s : "unknown error", (int)r);
  }
}

int gpujit__driver_get(const gpujit__driver **out)
{
  pthread_once(&once, load);
  if (load_status < 0)
    return gpujit__error(load_status, "%s", load_message);
  *out = &drv;
  return 0;
}

int gpujit__cuda_error(CUresult r, const char *what)
{
  const char *name = NULL, *text = NULL;
  if (r == CUDA_SUCCESS)
    return 0;
  if (drv.cuGetErrorName)
    drv.cuGetErrorName(r, &name);
  if (drv.cuGetErrorString)
    drv.cuGetErrorString(r, &text);
  return gpujit__error(r == CUDA_ERROR_NO_DEVICE ? GPUJIT_ENODEVICE : GPUJIT_ECUDA, "%s: %s (%s)", what,
                       text ? text : "unknown CUDA error", name ? name : "?");
}

int gpujit__driver_arch(char *out, size_t size)
{
  const gpujit__driver *d;
  CUdevice dev;
  int err, count = 0, major = 0, minor = 0, ordinal = 0;
  const char *env = getenv("GPUJIT_DEVICE");
  if ((err = gpujit__driver_get(&d)) < 0)
    return err;
  if ((err = gpujit__cuda_error(d->cuDeviceGetCount(&count), "cuDeviceGetCount")) < 0)
    return err;
  if (count == 0)
    return gpujit__error(GPUJIT_ENODEVICE, "no CUDA device");
  if (env && *env)
    ordinal = atoi(env);
  if (ordinal < 0 || ordinal >= count)
    return gpujit__error(GPUJIT_ENODEVICE, "GPUJIT_DEVICE=%s: only %d device(s)", env, count);
  if ((err = gpujit__cuda_error(d->cuDeviceGet(&dev, ordinal), "cuDeviceGet")) < 0 ||
      (err = gpujit__cuda_error(d->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute")) < 0 ||
      (err = gpujit__cuda_error(d->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute")) < 0)
    return err;
  snprintf(out, size, "sm_%d%d", major, minor);
  return 0;
}
