/* Kernel regions bound at load: a module built with gpujit/regions.cuh and GPUJIT_REGIONS declares
 * `gpujit_regions`; gpujit gives it an event buffer, so no kernel takes a parameter for it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "gpujit/regions.h"
#include "run/device.h"

#define CU(call, what) gpujit__cuda_error((call), (what))
#define STATE_SYMBOL "gpujit_regions"
#define STATE_BYTES 32 /* abi, scope (u32 each), events, capacity, count (u64 each) */

/* events, capacity and count written at offset 8, in order on the device's stream. */
static int write_binding(gpujit_loaded *l, gpujit_devptr events, uint64_t capacity)
{
  gpujit_device *g = l->dev;
  uint64_t words[3] = {events, capacity, 0};
  int err;
  if ((err = CU(g->d->cuMemcpyHtoDAsync((CUdeviceptr)(l->regions_state + 8), words, sizeof(words), g->stream),
                "binding the regions buffer")) < 0)
    return err;
  return CU(g->d->cuStreamSynchronize(g->stream), "binding the regions buffer");
}

static int alloc_events(gpujit_loaded *l, uint64_t capacity)
{
  CUdeviceptr p = 0;
  int err;
  if ((err = CU(l->dev->d->cuMemAlloc(&p, (size_t)capacity * GPUJIT_REGIONS_EVENT_WORDS * 8), "the regions buffer")) < 0)
    return gpujit__error(err, "allocating %llu region events: %s", (unsigned long long)capacity, gpujit_error_last());
  if ((err = write_binding(l, (gpujit_devptr)p, capacity)) < 0) {
    l->dev->d->cuMemFree(p);
    return err;
  }
  l->regions_events = (gpujit_devptr)p;
  l->regions_capacity = capacity;
  return 0;
}

int gpujit__regions_bind(gpujit_loaded *l)
{
  gpujit_device *g = l->dev;
  CUdeviceptr p = 0;
  size_t n = 0;
  uint32_t head[2] = {0, 0};
  CUresult r = g->d->cuModuleGetGlobal(&p, &n, l->mod, STATE_SYMBOL);
  int err;
  if (r == CUDA_ERROR_NOT_FOUND)
    return 0;
  if (r != CUDA_SUCCESS)
    return CU(r, STATE_SYMBOL);
  l->regions_state = (gpujit_devptr)p;
  if (n < STATE_BYTES) { /* not a layout of ours at all */
    l->regions_abi = 0;
    return 0;
  }
  if ((err = CU(g->d->cuMemcpyDtoHAsync(head, p, sizeof(head), g->stream), STATE_SYMBOL)) < 0 ||
      (err = CU(g->d->cuStreamSynchronize(g->stream), STATE_SYMBOL)) < 0)
    return err;
  l->regions_abi = head[0], l->regions_scope = head[1];
  if (head[0] != GPUJIT_REGIONS_LAYOUT) /* left unbound: the device then records nothing */
    return 0;
  return alloc_events(l, GPUJIT_REGIONS_DEFAULT_EVENTS);
}

void gpujit__regions_unbind(gpujit_loaded *l)
{
  if (l->regions_events)
    l->dev->d->cuMemFree((CUdeviceptr)l->regions_events);
  l->regions_events = 0;
}

int gpujit_loaded_regions(const gpujit_loaded *l) { return l && l->regions_events ? 1 : 0; }

int gpujit_loaded_regions_capacity(gpujit_loaded *l, uint64_t events)
{
  gpujit_devptr old;
  int err;
  if (!l || !l->regions_events || events == 0)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_loaded_regions_capacity: %s",
                         !l ? "NULL module" : events == 0 ? "0 events" : "the module records no regions");
  l->dev->d->cuCtxSetCurrent(l->dev->ctx);
  if ((err = CU(l->dev->d->cuStreamSynchronize(l->dev->stream), "the regions buffer")) < 0)
    return err;
  old = l->regions_events;
  if ((err = alloc_events(l, events)) < 0)
    return err; /* the old buffer stays bound */
  l->dev->d->cuMemFree((CUdeviceptr)old);
  return 0;
}

int gpujit_loaded_regions_reset(gpujit_loaded *l)
{
  if (!l || !l->regions_events)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_loaded_regions_reset: %s",
                         l ? "the module records no regions" : "NULL module");
  l->dev->d->cuCtxSetCurrent(l->dev->ctx);
  return CU(l->dev->d->cuMemsetD32Async((CUdeviceptr)(l->regions_state + 24), 0, 2, l->dev->stream),
            "resetting the regions count");
}

int gpujit_loaded_regions_count(gpujit_loaded *l, uint64_t *count, uint64_t *capacity)
{
  gpujit_device *g;
  uint64_t n = 0;
  int err;
  if (!l || !l->regions_events || !count)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_loaded_regions_count: %s",
                         l && count ? "the module records no regions" : "NULL argument");
  g = l->dev;
  g->d->cuCtxSetCurrent(g->ctx);
  if ((err = CU(g->d->cuMemcpyDtoHAsync(&n, (CUdeviceptr)(l->regions_state + 24), sizeof(n), g->stream),
                "reading the regions count")) < 0 ||
      (err = CU(g->d->cuStreamSynchronize(g->stream), "reading the regions count")) < 0)
    return err;
  *count = n;
  if (capacity)
    *capacity = l->regions_capacity;
  return 0;
}
