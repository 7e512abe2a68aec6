/* Kernel regions bound at load: a module built with gpujit/regions.cuh and GPUJIT_REGIONS declares
 * `gpujit_regions`; gpujit gives it an event buffer and a table of per-slot cursors, so no kernel
 * takes a parameter for them. Each hardware warp slot writes into its own chunk of the buffer and
 * claims a new chunk (one atomic) only when its chunk is full. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gpujit/regions.h"
#include "run/device.h"

#define STATE_SYMBOL "gpujit_regions"
/* abi, scope (u32); events, capacity, counters, slots, reserved (u64); nslots, chunk (u32) */
#define STATE_BYTES 56
#define CHUNK_MAX 64u          /* events per chunk: one atomic per 64 events of a slot */
#define WARP_SLOTS 64u         /* GPUJIT__REGIONS_WARP_SLOTS of the header */
#define SLOT_FULL 0xffffffffu  /* GPUJIT__REGIONS_FULL */
#define CAPACITY_MAX (1ull << 31) /* a slot's cursor is 32 bits */

/* The hardware slots a module's table has: SM ids may skip (floor-swept SMs keep their number),
 * so twice the SM count; 32 per warp in the thread scope. A slot past them is counted as lost. */
static unsigned slot_count(const gpujit_loaded *l)
{
  unsigned sms = l->dev->info.multiprocessors > 0 ? (unsigned)l->dev->info.multiprocessors : 132u;
  return 2u * sms * WARP_SLOTS * (l->regions_scope == GPUJIT_REGION_SCOPE_THREAD ? 32u : 1u);
}

/* Events, capacity, the counters (the two words after the slots), slots, nslots and chunk written
 * at offset 8, and every slot and counter zeroed, in order on the device's stream. */
static int write_binding(gpujit_loaded *l, gpujit_devptr events, uint64_t capacity, unsigned chunk)
{
  gpujit_device *g = l->dev;
  uint64_t words[6] = {events, capacity, l->regions_slots + (uint64_t)l->regions_nslots * 8, l->regions_slots, 0,
                       (uint64_t)l->regions_nslots | (uint64_t)chunk << 32};
  int err;
  if ((err = CU(g->d->cuMemcpyHtoDAsync((CUdeviceptr)(l->regions_state + 8), words, sizeof(words), g->stream),
                "binding the regions buffer")) < 0 ||
      (err = CU(g->d->cuMemsetD32Async((CUdeviceptr)l->regions_slots, 0, ((size_t)l->regions_nslots + 2) * 2, g->stream),
                "binding the regions buffer")) < 0)
    return err;
  return CU(g->d->cuStreamSynchronize(g->stream), "binding the regions buffer");
}

/* A capacity asked for as chunks: 64 events each, smaller only for a buffer smaller than that. */
static void geometry(uint64_t asked, uint64_t *capacity, unsigned *chunk)
{
  unsigned c = CHUNK_MAX;
  while (c > 1 && c > asked)
    c /= 2;
  *chunk = c;
  *capacity = asked - asked % c;
}

static int alloc_events(gpujit_loaded *l, uint64_t asked)
{
  CUdeviceptr p = 0;
  uint64_t capacity;
  unsigned chunk;
  int err;
  geometry(asked, &capacity, &chunk);
  if ((err = CU(l->dev->d->cuMemAlloc(&p, (size_t)capacity * GPUJIT_REGIONS_EVENT_WORDS * 8), "the regions buffer")) < 0)
    return gpujit__error(err, "allocating %llu region events: %s", (unsigned long long)capacity, gpujit_error_last());
  if ((err = write_binding(l, (gpujit_devptr)p, capacity, chunk)) < 0) {
    l->dev->d->cuMemFree(p);
    return err;
  }
  l->regions_events = (gpujit_devptr)p;
  l->regions_capacity = capacity;
  l->regions_chunk = chunk;
  return 0;
}

int gpujit__regions_bind(gpujit_loaded *l)
{
  gpujit_device *g = l->dev;
  CUdeviceptr p = 0, slots = 0;
  size_t n = 0;
  uint32_t head[2] = {0, 0};
  CUresult r = g->d->cuModuleGetGlobal(&p, &n, l->mod, STATE_SYMBOL);
  int err;
  if (r == CUDA_ERROR_NOT_FOUND)
    return 0;
  if (r != CUDA_SUCCESS)
    return CU(r, STATE_SYMBOL);
  l->regions_state = (gpujit_devptr)p;
  if (n < 8) { /* not a layout of ours at all */
    l->regions_abi = 0;
    return 0;
  }
  if ((err = CU(g->d->cuMemcpyDtoHAsync(head, p, sizeof(head), g->stream), STATE_SYMBOL)) < 0 ||
      (err = CU(g->d->cuStreamSynchronize(g->stream), STATE_SYMBOL)) < 0)
    return err;
  l->regions_abi = head[0], l->regions_scope = head[1];
  if (head[0] != GPUJIT_REGIONS_LAYOUT || n < STATE_BYTES) /* left unbound: the device then records nothing */
    return 0;
  l->regions_nslots = slot_count(l);
  if ((err = CU(g->d->cuMemAlloc(&slots, ((size_t)l->regions_nslots + 2) * 8), "the regions slots")) < 0)
    return err;
  l->regions_slots = (gpujit_devptr)slots;
  if ((err = alloc_events(l, GPUJIT_REGIONS_DEFAULT_EVENTS)) < 0) {
    g->d->cuMemFree(slots);
    l->regions_slots = 0;
  }
  return err;
}

void gpujit__regions_unbind(gpujit_loaded *l)
{
  if (l->regions_events)
    l->dev->d->cuMemFree((CUdeviceptr)l->regions_events);
  if (l->regions_slots)
    l->dev->d->cuMemFree((CUdeviceptr)l->regions_slots);
  l->regions_events = l->regions_slots = 0;
}

int gpujit_loaded_regions(const gpujit_loaded *l) { return l && l->regions_events ? 1 : 0; }

int gpujit_loaded_regions_capacity(gpujit_loaded *l, uint64_t events)
{
  gpujit_devptr old;
  int err;
  if (!l || !l->regions_events || events == 0 || events > CAPACITY_MAX)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_loaded_regions_capacity: %s",
                         !l                   ? "NULL module"
                         : events == 0        ? "0 events"
                         : !l->regions_events ? "the module records no regions"
                                              : "more than 2^31 events");
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
  gpujit_device *g;
  if (!l || !l->regions_events)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_loaded_regions_reset: %s",
                         l ? "the module records no regions" : "NULL module");
  g = l->dev;
  g->d->cuCtxSetCurrent(g->ctx);
  /* every slot, then the chunks claimed and the events lost: each launch after it starts from an empty buffer */
  return CU(g->d->cuMemsetD32Async((CUdeviceptr)l->regions_slots, 0, ((size_t)l->regions_nslots + 2) * 2, g->stream),
            "resetting the regions");
}

void gpujit__regions_layout(const uint64_t *slots, size_t nslots, uint64_t claimed, uint64_t lost, uint64_t capacity,
                            unsigned chunk, uint32_t *fill, uint64_t *used, uint64_t *kept, uint64_t *dropped)
{
  uint64_t chunks = chunk ? capacity / chunk : 0, u = claimed < chunks ? claimed : chunks, k = 0, d = lost;
  for (uint64_t c = 0; c < u; c++)
    fill[c] = chunk; /* a slot claims a chunk only when it writes into it, and a new one when it is full */
  for (size_t i = 0; i < nslots; i++) {
    uint32_t pos = (uint32_t)slots[i];
    d += slots[i] >> 32;
    if (pos != SLOT_FULL && pos % chunk != 0 && pos / chunk < u) /* its current chunk, partly written */
      fill[pos / chunk] = pos % chunk;
  }
  for (uint64_t c = 0; c < u; c++)
    k += fill[c];
  *used = u, *kept = k, *dropped = d;
}

int gpujit__regions_tally(gpujit_loaded *l, uint32_t **fill, uint64_t *used, uint64_t *kept, uint64_t *dropped)
{
  gpujit_device *g = l->dev;
  uint64_t *slots = malloc(((size_t)l->regions_nslots + 2) * 8);
  uint32_t *f = malloc((size_t)(l->regions_capacity / l->regions_chunk) * sizeof(*f) + 4);
  int err;
  *fill = NULL;
  if (!slots || !f) {
    free(slots), free(f);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  g->d->cuCtxSetCurrent(g->ctx);
  /* the slots, then the chunks claimed and the events lost */
  if ((err = CU(g->d->cuMemcpyDtoHAsync(slots, (CUdeviceptr)l->regions_slots, ((size_t)l->regions_nslots + 2) * 8,
                                        g->stream),
                "reading the regions count")) < 0 ||
      (err = CU(g->d->cuStreamSynchronize(g->stream), "reading the regions count")) < 0) {
    free(slots), free(f);
    return err;
  }
  gpujit__regions_layout(slots, l->regions_nslots, slots[l->regions_nslots], slots[l->regions_nslots + 1],
                         l->regions_capacity, l->regions_chunk, f, used, kept, dropped);
  free(slots);
  *fill = f;
  return 0;
}

int gpujit_loaded_regions_count(gpujit_loaded *l, uint64_t *count, uint64_t *capacity)
{
  uint64_t used = 0, kept = 0, dropped = 0;
  uint32_t *fill = NULL;
  int err;
  if (!l || !l->regions_events || !count)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_loaded_regions_count: %s",
                         l && count ? "the module records no regions" : "NULL argument");
  if ((err = gpujit__regions_tally(l, &fill, &used, &kept, &dropped)) < 0)
    return err;
  free(fill);
  *count = kept + dropped;
  if (capacity)
    *capacity = l->regions_capacity;
  return 0;
}
