/* Kernel regions read back: a loaded module's events and the names they point at, copied from
 * the device and summarised (timing/kregions.c). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gpujit/regions.h"
#include "run/device.h"

#define CU(call, what) gpujit__cuda_error((call), (what))
#define NAME_MAX_BYTES 128

static int copy_back(gpujit_loaded *l, void *dst, gpujit_devptr src, size_t bytes)
{
  gpujit_device *g = l->dev;
  int err;
  if ((err = CU(g->d->cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, bytes, g->stream), "reading the regions")) < 0)
    return err;
  return CU(g->d->cuStreamSynchronize(g->stream), "reading the regions");
}

/* A name the device recorded by address: the string literal read from the module's memory. A
 * literal near the end of its segment cannot be read 128 bytes at once: then byte by byte. */
static void read_name(gpujit_loaded *l, uint64_t addr, char out[NAME_MAX_BYTES])
{
  gpujit_device *g = l->dev;
  memset(out, 0, NAME_MAX_BYTES);
  if (g->d->cuMemcpyDtoHAsync(out, (CUdeviceptr)addr, NAME_MAX_BYTES - 1, g->stream) == CUDA_SUCCESS &&
      g->d->cuStreamSynchronize(g->stream) == CUDA_SUCCESS)
    return;
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

/* The distinct addresses of the events, each with its name. */
static int read_names(gpujit_loaded *l, const uint64_t *ev, size_t n, gpujit_region_name **out, char **store,
                      size_t *count)
{
  gpujit_region_name *names = NULL;
  char *text = NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t a = ev[(size_t)GPUJIT_REGIONS_EVENT_WORDS * i];
    size_t j = 0;
    while (j < k && names[j].addr != a)
      j++;
    if (j < k)
      continue;
    gpujit_region_name *gn = realloc(names, (k + 1) * sizeof(*names));
    char *gt = gn ? realloc(text, (k + 1) * NAME_MAX_BYTES) : NULL;
    if (gn)
      names = gn;
    if (!gt) {
      free(names), free(text);
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    }
    text = gt;
    names[k].addr = a;
    read_name(l, a, text + k * NAME_MAX_BYTES);
    k++;
  }
  for (size_t j = 0; j < k; j++) /* pointers once the text stopped moving */
    names[j].name = text + j * NAME_MAX_BYTES;
  *out = names, *store = text, *count = k;
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

int gpujit_loaded_regions_read(gpujit_region_report **out, gpujit_loaded *l, double kernel_ms, unsigned launches)
{
  uint64_t count = 0, n, *ev = NULL;
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
  if ((err = copy_back(l, &count, l->regions_state + 24, sizeof(count))) < 0)
    return err;
  n = count < l->regions_capacity ? count : l->regions_capacity;
  if (n && !(ev = malloc((size_t)n * GPUJIT_REGIONS_EVENT_WORDS * 8)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (n && (err = copy_back(l, ev, l->regions_events, (size_t)n * GPUJIT_REGIONS_EVENT_WORDS * 8)) < 0)
    goto done;
  if ((err = read_names(l, ev, (size_t)n, &names, &text, &nnames)) < 0)
    goto done;
  err = gpujit_regions_analyze(out, ev, (size_t)n, count - n, names, nnames, kernel_ms * 1e6, launches,
                               (gpujit_region_scope)l->regions_scope);
done:
  free(ev), free(names), free(text);
  return err;
}
