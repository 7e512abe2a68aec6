/* Kernel regions read back: a loaded module's events and the names they point at, copied from
 * the device and summarised (timing/kregions.c). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gpujit/regions.h"
#include "inject/kregions_analyze.h"
#include "run/device.h"
#include "timing/regions.h"

#define NAME_MAX_BYTES 128
#define REGIONS_SLOT_FULL 0xffffffffu /* GPUJIT__REGIONS_FULL of gpujit/regions.cuh: no chunk left */

static int copy_back(gpujit_loaded *l, void *dst, gpujit_devptr src, size_t bytes)
{
  gpujit_device *g = l->dev;
  int err;
  if ((err = CU(g->d->cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, bytes, g->stream), "reading the regions")) < 0)
    return err;
  return CU(g->d->cuStreamSynchronize(g->stream), "reading the regions");
}

/* A name the device recorded by address: the string literal read from the module's memory, no
 * further than the end of the allocation holding it (a read past it fails, and
 * compute-sanitizer counts the failed call as an error); where the range is unknown, byte by byte
 * up to the literal's NUL. */
static void read_name(gpujit_loaded *l, uint64_t addr, char out[NAME_MAX_BYTES])
{
  gpujit_device *g = l->dev;
  CUdeviceptr base = 0;
  size_t size = 0, n = NAME_MAX_BYTES - 1;
  memset(out, 0, NAME_MAX_BYTES);
  if (g->d->cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)addr) == CUDA_SUCCESS &&
      g->d->cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)addr) == CUDA_SUCCESS &&
      addr >= base && addr < base + size) {
    if (base + size - addr < n)
      n = (size_t)(base + size - addr);
    if (g->d->cuMemcpyDtoHAsync(out, (CUdeviceptr)addr, n, g->stream) == CUDA_SUCCESS &&
        g->d->cuStreamSynchronize(g->stream) == CUDA_SUCCESS && out[0])
      return;
  }
  memset(out, 0, NAME_MAX_BYTES);
  for (size_t i = 0; i + 1 < NAME_MAX_BYTES; i++)
    if (g->d->cuMemcpyDtoHAsync(out + i, (CUdeviceptr)(addr + i), 1, g->stream) != CUDA_SUCCESS ||
        g->d->cuStreamSynchronize(g->stream) != CUDA_SUCCESS || out[i] == '\0') {
      out[i] = '\0';
      break;
    }
  if (!out[0])
    snprintf(out, NAME_MAX_BYTES, "0x%llx", (unsigned long long)addr);
}

static void read_name_of(void *l, uint64_t addr, char *out) { read_name(l, addr, out); }

/* The distinct addresses of the events, each with its name. */
static int read_names(gpujit_loaded *l, const uint64_t *ev, size_t n, gpujit_region_name **out, char **store,
                      size_t *count)
{
  long k = kra_names_of(ev, n, NAME_MAX_BYTES, read_name_of, l, out, store);
  if (k < 0)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  *count = (size_t)k;
  return 0;
}

static int check_bound(const gpujit_loaded *l)
{
  if (!l)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_loaded_regions_read: NULL module");
  if (l->regions_state && !l->regions_events)
    return gpujit__error(GPUJIT_EINVAL,
                         "the module's gpujit_regions has layout %u; this gpujit reads layout %d: build it with "
                         "this gpujit's gpujit/regions.cuh (gpujit --include-dir)",
                         l->regions_abi, GPUJIT_REGIONS_LAYOUT);
  if (!l->regions_events)
    return gpujit__error(GPUJIT_EINVAL, "the module records no regions: build it with --regions (GPUJIT_REGIONS) "
                                        "and #include <gpujit/regions.cuh>");
  return 0;
}

/* Where each chunk's events after a mark start (gpujit__regions_mark: claimed, lost, then the
 * slots): chunks claimed since are new from their first event; a chunk a slot was filling at the
 * mark, from where it stood (only that slot writes there); the others hold nothing new. The
 * events dropped since the mark are the caller's dropped less those counted at the mark. */
static void since_mark(const gpujit_loaded *l, const uint64_t *mark, const uint32_t *fill, uint64_t used,
                       uint32_t *start, uint64_t *dropped)
{
  uint64_t chunks = l->regions_capacity / l->regions_chunk, claimed = mark[0] < chunks ? mark[0] : chunks, before = mark[1];
  for (uint64_t c = 0; c < used; c++)
    start[c] = c < claimed ? fill[c] : 0;
  for (size_t i = 0; i < l->regions_nslots; i++) {
    uint32_t pos = (uint32_t)mark[2 + i];
    before += mark[2 + i] >> 32;
    if (pos != REGIONS_SLOT_FULL && pos % l->regions_chunk != 0 && pos / l->regions_chunk < claimed &&
        pos / l->regions_chunk < used)
      start[pos / l->regions_chunk] = pos % l->regions_chunk;
  }
  for (uint64_t c = 0; c < used; c++) /* a reset by hand since the mark: nothing is older */
    if (start[c] > fill[c])
      start[c] = fill[c];
  *dropped = *dropped > before ? *dropped - before : 0;
}

/* The events written (since `mark`, where there is one), chunk by chunk without the unwritten
 * tails: each slot's events stay in the order it wrote them (its chunks are claimed in increasing
 * order). */
static int copy_events(gpujit_loaded *l, const uint64_t *mark, uint64_t **out, uint64_t *n, uint64_t *dropped)
{
  const size_t w = GPUJIT_REGIONS_EVENT_WORDS;
  uint64_t used = 0, kept = 0, k = 0, *ev = NULL;
  uint32_t *fill = NULL, *start = NULL;
  int err;
  *out = NULL, *n = 0;
  if ((err = gpujit__regions_tally(l, &fill, &used, &kept, dropped)) < 0)
    return err;
  if (mark && !(start = calloc((size_t)used + 1, sizeof(*start)))) {
    free(fill);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  if (mark)
    since_mark(l, mark, fill, used, start, dropped);
  if (used && !(ev = malloc((size_t)(used * l->regions_chunk) * w * 8))) {
    free(fill), free(start);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  if (used && (err = copy_back(l, ev, l->regions_events, (size_t)(used * l->regions_chunk) * w * 8)) < 0) {
    free(fill), free(start), free(ev);
    return err;
  }
  for (uint64_t c = 0; c < used; c++) {
    uint32_t from = start ? start[c] : 0;
    memmove(ev + k * w, ev + (c * l->regions_chunk + from) * w, (size_t)(fill[c] - from) * w * 8);
    k += fill[c] - from;
  }
  free(fill), free(start);
  *out = ev, *n = k;
  return 0;
}

int gpujit__regions_mark(gpujit_loaded *l, uint64_t **out)
{
  gpujit_device *g = l->dev;
  uint64_t *m = malloc(((size_t)l->regions_nslots + 4) * 8);
  int err;
  *out = NULL;
  if (!m)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  g->d->cuCtxSetCurrent(g->ctx);
  /* the slots, then claimed and lost (layout 3 keeps the counters after them), after the work before */
  if ((err = copy_back(l, m + 2, l->regions_slots, ((size_t)l->regions_nslots + 2) * 8)) < 0) {
    free(m);
    return err;
  }
  m[0] = m[2 + l->regions_nslots], m[1] = m[3 + l->regions_nslots];
  *out = m;
  return 0;
}

int gpujit_loaded_regions_read(gpujit_region_report **out, gpujit_loaded *l, double kernel_ms, unsigned launches)
{
  return gpujit__regions_read_since(out, l, NULL, kernel_ms, launches);
}

int gpujit__regions_read_since(gpujit_region_report **out, gpujit_loaded *l, const uint64_t *mark, double kernel_ms,
                               unsigned launches)
{
  uint64_t n = 0, dropped = 0, *ev = NULL;
  gpujit_region_name *names = NULL;
  char *text = NULL;
  size_t nnames = 0;
  int err;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_loaded_regions_read: NULL out");
  *out = NULL;
  if ((err = check_bound(l)) < 0)
    return err;
  l->dev->d->cuCtxSetCurrent(l->dev->ctx);
  if ((err = copy_events(l, mark, &ev, &n, &dropped)) < 0)
    return err;
  if ((err = read_names(l, ev, (size_t)n, &names, &text, &nnames)) < 0)
    goto done;
  err = gpujit_regions_analyze(out, ev, (size_t)n, dropped, names, nnames, kernel_ms * 1e6, launches,
                               (gpujit_region_scope)l->regions_scope);
done:
  free(ev), free(names), free(text);
  return err;
}
