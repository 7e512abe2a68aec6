/* Devices: opening one (primary context, own stream), its facts, synchronising, and the hooks
 * a layer above installs to watch each activity. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "run/device.h"

int gpujit_device_count(int *out)
{
  const gpujit__driver *d;
  int err;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_count: NULL out");
  *out = 0;
  if ((err = gpujit__driver_get(&d)) < 0)
    return err;
  return CU(d->cuDeviceGetCount(out), "cuDeviceGetCount");
}

int gpujit_driver_version(int *version, int *devices)
{
  const gpujit__driver *d;
  int v = 0, n = 0, err;
  if (version)
    *version = 0;
  if (devices)
    *devices = 0;
  if ((err = gpujit__driver_get(&d)) < 0)
    return err;
  if ((err = CU(d->cuDriverGetVersion(&v), "cuDriverGetVersion")) < 0 ||
      (err = CU(d->cuDeviceGetCount(&n), "cuDeviceGetCount")) < 0)
    return err;
  if (version)
    *version = v;
  if (devices)
    *devices = n;
  return 0;
}

static int attr(gpujit_device *g, CUdevice_attribute a, int *out)
{
  return CU(g->d->cuDeviceGetAttribute(out, a, g->dev), "cuDeviceGetAttribute");
}

int gpujit_device_open(gpujit_device **out, int ordinal)
{
  gpujit_device *g;
  const char *env = getenv("GPUJIT_DEVICE");
  int count = 0, err;
  size_t total = 0;

  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_open: NULL out");
  *out = NULL;
  if ((err = gpujit_device_count(&count)) < 0)
    return err;
  if (ordinal < 0)
    ordinal = env && *env ? atoi(env) : 0;
  if (count == 0)
    return gpujit__error(GPUJIT_ENODEVICE, "no CUDA device");
  if (ordinal < 0 || ordinal >= count)
    return gpujit__error(GPUJIT_ENODEVICE, "device %d requested; this machine has %d", ordinal, count);
  if (!(g = calloc(1, sizeof(*g))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  gpujit__driver_get(&g->d);
  g->info.ordinal = ordinal;
  if ((err = CU(g->d->cuDeviceGet(&g->dev, ordinal), "cuDeviceGet")) < 0 ||
      (err = CU(g->d->cuDevicePrimaryCtxRetain(&g->ctx, g->dev), "cuDevicePrimaryCtxRetain")) < 0)
    goto fail;
  if ((err = CU(g->d->cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent")) < 0 ||
      (err = CU(g->d->cuStreamCreate(&g->own, CU_STREAM_NON_BLOCKING), "cuStreamCreate")) < 0)
    goto fail;
  g->stream = g->own;
  g->d->cuDeviceGetName(g->info.name, sizeof(g->info.name), g->dev);
  g->d->cuDeviceTotalMem(&total, g->dev);
  g->info.total_memory = total;
  g->d->cuDriverGetVersion(&g->info.driver_version);
  if ((err = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &g->info.cc_major)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &g->info.cc_minor)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &g->info.multiprocessors)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &g->info.max_threads_per_block)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &g->info.max_block[0])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &g->info.max_block[1])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &g->info.max_block[2])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &g->info.max_grid[0])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &g->info.max_grid[1])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &g->info.max_grid[2])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &g->info.max_shared_per_block)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &g->info.max_shared_per_block_optin)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &g->info.l2_bytes)) < 0)
    goto fail;
  *out = g;
  return 0;
fail:
  gpujit_device_free(g);
  return err;
}

void gpujit_device_free(gpujit_device *g)
{
  if (!g)
    return;
  if (g->ctx) {
    g->d->cuCtxSetCurrent(g->ctx);
    if (g->stream)
      g->d->cuStreamSynchronize(g->stream);
    if (g->hooks && g->hooks->detach)
      g->hooks->detach(g, g->hooks_payload);
    if (g->own)
      g->d->cuStreamDestroy(g->own);
    g->d->cuDevicePrimaryCtxRelease(g->dev);
  }
  free(g);
}

int gpujit_device_info_get(gpujit_device *g, gpujit_device_info *out)
{
  if (!g || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_info_get: NULL argument");
  *out = g->info;
  return 0;
}

int gpujit_device_free_memory(gpujit_device *g, uint64_t *out)
{
  size_t free_b = 0, total = 0;
  int err;
  if (!g || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_free_memory: NULL argument");
  g->d->cuCtxSetCurrent(g->ctx);
  if ((err = CU(g->d->cuMemGetInfo(&free_b, &total), "cuMemGetInfo")) < 0)
    return err;
  *out = free_b;
  return 0;
}

int gpujit_device_set_stream(gpujit_device *g, void *stream)
{
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_set_stream: NULL device");
  if (g->capturing)
    return gpujit__error(GPUJIT_EINVAL, "the stream cannot change while a graph capture is open");
  g->stream = stream ? (CUstream)stream : g->own;
  return 0;
}

void *gpujit_device_stream(const gpujit_device *g) { return g ? (void *)g->stream : NULL; }

int gpujit_device_synchronize(gpujit_device *g)
{
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_synchronize: NULL device");
  g->d->cuCtxSetCurrent(g->ctx);
  return CU(g->d->cuCtxSynchronize(), g->last_kernel[0] ? g->last_kernel : "synchronising the device");
}

int gpujit_device_current(int *out)
{
  const gpujit__driver *d;
  CUcontext ctx = NULL;
  CUdevice dev = 0;
  int err;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_current: NULL out");
  *out = -1;
  if ((err = gpujit__driver_get(&d)) < 0)
    return err;
  if (d->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx || d->cuCtxGetDevice(&dev) != CUDA_SUCCESS)
    return 0;
  *out = (int)dev;
  return 0;
}

int gpujit_pointer_device(int *out, gpujit_devptr ptr)
{
  const gpujit__driver *d;
  int ordinal = -1, err;
  unsigned mem = 0;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_pointer_device: NULL out");
  *out = -1;
  if ((err = gpujit__driver_get(&d)) < 0)
    return err;
  if (d->cuPointerGetAttribute(&mem, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)ptr) != CUDA_SUCCESS ||
      (mem != CU_MEMORYTYPE_DEVICE && mem != CU_MEMORYTYPE_UNIFIED) ||
      d->cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)ptr) != CUDA_SUCCESS)
    return 0;
  *out = ordinal;
  return 0;
}

int gpujit_synchronize(gpujit_device *g)
{
  CUresult r;
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_synchronize: NULL device");
  g->d->cuCtxSetCurrent(g->ctx);
  r = g->d->cuStreamSynchronize(g->stream);
  if (r != CUDA_SUCCESS) {
    char what[200];
    snprintf(what, sizeof(what), "%s%s", g->last_kernel[0] ? "after kernel " : "synchronising",
             g->last_kernel);
    return CU(r, what);
  }
  return 0;
}

void gpujit__device_set_hooks(gpujit_device *dev, const gpujit__activity_hooks *hooks, void *payload)
{
  dev->hooks = hooks;
  dev->hooks_payload = payload;
  dev->hooks_on = false;
}

void gpujit__device_hooks_enable(gpujit_device *dev, bool on) { dev->hooks_on = on && dev->hooks; }

_Thread_local gpujit__ctx_note gpujit__ctx_noted;
unsigned gpujit__ctx_watching;
static unsigned ctx_watches; /* watch numbers handed out: one is never reused */

void gpujit__ctx_watch(bool on)
{
  __atomic_store_n(&gpujit__ctx_watching, on ? __atomic_add_fetch(&ctx_watches, 1, __ATOMIC_RELAXED) : 0,
                   __ATOMIC_RELEASE);
}

void gpujit__ctx_changed(bool every_thread)
{
  unsigned w = __atomic_load_n(&gpujit__ctx_watching, __ATOMIC_ACQUIRE);
  gpujit__ctx_noted.watch = 0;
  /* a new number, so every thread's note is older; never where the watch ended meanwhile */
  while (every_thread && w &&
         !__atomic_compare_exchange_n(&gpujit__ctx_watching, &w, __atomic_add_fetch(&ctx_watches, 1, __ATOMIC_RELAXED),
                                      false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    ;
}
