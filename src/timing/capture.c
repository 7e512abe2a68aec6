/* Process-wide captures: every kernel, copy and memset that ran on any GPU of the process during
 * a region, whoever issued it, from CUPTI's activity records (the CUPTI layer keeps them while a
 * capture is open); and the kernel regions of the devices' modules launched meanwhile. */
#define _GNU_SOURCE
#include <cupti_activity.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "driver/driver.h"
#include "gpujit/timing.h"
#include "timing/cupti.h"
#include "timing/regions.h"

#define MAX_REGION_DEVICES 16

struct gpujit_capture {
  unsigned filter;
  uint64_t t0; /* CUPTI's clock at the start */
  gpujit_device *rdevs[MAX_REGION_DEVICES]; /* whose kernel regions it reads, in its windows */
  gpujit__rwin *rwins[MAX_REGION_DEVICES];
  size_t nrdevs;
};

int gpujit_capture_regions(gpujit_capture *c, gpujit_device *dev)
{
  gpujit__timing *t = NULL;
  int err;
  if (!c || !dev)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_capture_regions: NULL argument");
  for (size_t i = 0; i < c->nrdevs; i++)
    if (c->rdevs[i] == dev)
      return gpujit__error(GPUJIT_EINVAL, "gpujit_capture_regions: device %d given twice", dev->info.ordinal);
  if (c->nrdevs == MAX_REGION_DEVICES)
    return gpujit__error(GPUJIT_EINVAL, "a capture reads the regions of at most %d devices", MAX_REGION_DEVICES);
  if ((err = gpujit__timing_of(dev, &t)) < 0 || (err = gpujit__rwatch_open(t, &c->rwins[c->nrdevs])) < 0)
    return err;
  c->rdevs[c->nrdevs++] = dev;
  return 0;
}

/* Close the capture's kernel-regions windows, its kernel records giving each module's kernel
 * time. The first error is kept. */
static int close_windows(gpujit_capture *c, const gpujit_timing_result *res, size_t n, int err)
{
  for (size_t i = 0; i < c->nrdevs; i++) {
    gpujit__timing *t = NULL;
    int e;
    if (gpujit__timing_of(c->rdevs[i], &t) < 0)
      continue;
    gpujit__rwatch_time_results(t, c->rwins[i], res, n);
    if ((e = gpujit__rwatch_close(t, c->rwins[i], 0)) < 0 && err == 0)
      err = e;
  }
  return err;
}

int gpujit_capture_begin(gpujit_capture **out, unsigned filter)
{
  gpujit_capture *c;
  int err;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_capture_begin: NULL out");
  *out = NULL;
  if (!(filter & GPUJIT_TIMING_ALL))
    return gpujit__error(GPUJIT_EINVAL, "capture filter 0x%x selects nothing", filter);
  if (!(c = calloc(1, sizeof(*c))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((err = gpujit__cupti_capture_open()) < 0) {
    free(c);
    return err;
  }
  c->filter = filter;
  c->t0 = gpujit__cupti_now_ns();
  *out = c;
  return 0;
}

/* Wait for every active primary context and the calling thread's own context: a record comes
 * only once its work is done. */
static int synchronize_all(void)
{
  const gpujit__driver *d;
  CUcontext cur = NULL;
  int count = 0, err = 0;
  if (gpujit__driver_get(&d) < 0)
    return 0; /* no driver: nothing ran */
  if (d->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur &&
      (err = gpujit__cuda_error(d->cuCtxSynchronize(), "waiting for the captured work")) < 0)
    return err;
  d->cuDeviceGetCount(&count);
  for (int i = 0; i < count && err == 0; i++) {
    CUdevice dev;
    CUcontext ctx = NULL, popped;
    unsigned flags = 0;
    int active = 0;
    if (d->cuDeviceGet(&dev, i) != CUDA_SUCCESS || d->cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS ||
        !active || d->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS)
      continue;
    if (ctx != cur && d->cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {
      err = gpujit__cuda_error(d->cuCtxSynchronize(), "waiting for the captured work");
      d->cuCtxPopCurrent(&popped);
    }
    d->cuDevicePrimaryCtxRelease(dev);
  }
  return err;
}

static void describe(gpujit_timing_result *r, const gpujit__cupti_rec *a)
{
  if (a->kind == 0) {
    r->kind = GPUJIT_ACTIVITY_KERNEL;
    snprintf(r->name, sizeof(r->name), "%s", a->name);
    return;
  }
  if (a->kind == 2) {
    r->kind = GPUJIT_ACTIVITY_MEMSET;
    snprintf(r->name, sizeof(r->name), "memset");
    return;
  }
  switch (a->copy_kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
    r->kind = GPUJIT_ACTIVITY_MEMCPY_HTOD;
    snprintf(r->name, sizeof(r->name), "memcpy HtoD");
    break;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
    r->kind = GPUJIT_ACTIVITY_MEMCPY_DTOH;
    snprintf(r->name, sizeof(r->name), "memcpy DtoH");
    break;
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
    r->kind = GPUJIT_ACTIVITY_MEMCPY_DTOD;
    snprintf(r->name, sizeof(r->name), "memcpy PtoP");
    break;
  default:
    r->kind = GPUJIT_ACTIVITY_MEMCPY_DTOD;
    snprintf(r->name, sizeof(r->name), "memcpy DtoD");
  }
}

static unsigned filter_of(const gpujit__cupti_rec *a)
{
  if (a->kind == 0)
    return a->graph_id ? GPUJIT_TIMING_KERNEL | GPUJIT_TIMING_GRAPH : GPUJIT_TIMING_KERNEL;
  return a->kind == 2 ? GPUJIT_TIMING_MEMSET : GPUJIT_TIMING_MEMCPY;
}

int gpujit_capture_end(gpujit_capture *c, gpujit_timing_result **out, size_t *count, uint64_t *lost)
{
  gpujit__cupti_rec *recs = NULL;
  gpujit_timing_result *res = NULL;
  size_t n = 0, k = 0;
  uint64_t t1;
  double offset;
  int err;
  if (out)
    *out = NULL;
  if (count)
    *count = 0;
  if (lost)
    *lost = 0;
  if (!c || !out || !count) {
    if (c)
      close_windows(c, NULL, 0, -1);
    free(c);
    return gpujit__error(GPUJIT_EINVAL, "gpujit_capture_end: NULL argument");
  }
  err = synchronize_all();
  t1 = gpujit__cupti_now_ns();
  if (err == 0)
    err = gpujit__cupti_capture_take(&recs, &n, c->t0, t1, lost);
  if (err == 0 && n && !(res = calloc(n, sizeof(*res))))
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
  offset = gpujit__cupti_clock_offset_us();
  for (size_t i = 0; err == 0 && i < n; i++) {
    gpujit_timing_result *r;
    if (!(filter_of(&recs[i]) & c->filter))
      continue;
    r = &res[k];
    describe(r, &recs[i]);
    r->device = (int)recs[i].device;
    r->elapsed_ms = recs[i].end > recs[i].start ? (double)(recs[i].end - recs[i].start) / 1e6 : 0;
    r->order = k;
    r->start_us = (double)recs[i].start / 1e3 - offset;
    r->bytes = recs[i].bytes;
    r->graph_node = recs[i].graph_node;
    k++;
  }
  free(recs);
  gpujit__cupti_capture_close();
  err = close_windows(c, res, k, err);
  free(c);
  if (err < 0) {
    free(res);
    return err;
  }
  *out = res;
  *count = k;
  return 0;
}
