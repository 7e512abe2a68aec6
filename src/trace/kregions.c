/* Kernel regions in a trace: each call of a region (timing/kregions.c made the report) as a slice
 * on a track per SM, or per recording unit. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gpujit/regions.h"

static const char *scope_name(gpujit_region_scope s)
{
  return s == GPUJIT_REGION_SCOPE_BLOCK ? "block" : s == GPUJIT_REGION_SCOPE_THREAD ? "thread" : "warp";
}

/* Tracks of one SM: the end of the last call placed on each, so a unit whose calls overlap
 * another's goes to a further track. */
typedef struct lanes {
  uint32_t sm;
  size_t n;
  uint64_t busy_until[32];
  int64_t tid[32];
} lanes;

static int lane_track(gpujit_trace *t, lanes *l, uint64_t first, uint64_t last, int64_t *tid)
{
  size_t k = 0;
  int err;
  while (k < l->n && l->busy_until[k] > first)
    k++;
  if (k == 32) /* past 32 overlapping units the last track takes them (they render overlapped) */
    k = 31;
  if (k == l->n) {
    char name[64];
    if (k)
      snprintf(name, sizeof(name), "SM %u #%zu", l->sm, k + 1);
    else
      snprintf(name, sizeof(name), "SM %u", l->sm);
    if ((err = gpujit_trace_track(t, &l->tid[k], name)) < 0)
      return err;
    l->n++;
  }
  if (last > l->busy_until[k])
    l->busy_until[k] = last;
  *tid = l->tid[k];
  return 0;
}

static lanes *lanes_of(lanes **all, size_t *n, uint32_t sm)
{
  lanes *grown;
  for (size_t i = 0; i < *n; i++)
    if ((*all)[i].sm == sm)
      return &(*all)[i];
  if (!(grown = realloc(*all, (*n + 1) * sizeof(**all))))
    return NULL;
  *all = grown;
  memset(&grown[*n], 0, sizeof(grown[0]));
  grown[*n].sm = sm;
  return &grown[(*n)++];
}

/* One unit's calls [a, b) on its track. */
static int trace_unit(gpujit_trace *t, const gpujit_region_report *r, size_t a, size_t b, int64_t tid,
                      uint64_t t0, double start_us)
{
  int err;
  for (size_t i = a; i < b; i++) {
    const gpujit_region_slice *s = &r->slices[i];
    uint64_t id = 0;
    double ts = start_us + (double)(s->start_ns - t0) / 1e3;
    if ((err = gpujit_trace_complete(t, &id, tid, "region", r->regions[s->region].name, ts, (double)s->dur_ns / 1e3)) < 0)
      return err;
    gpujit_trace_span_arg_num(t, id, "cycles", (double)s->cycles);
    gpujit_trace_span_arg_num(t, id, "unit", (double)s->unit);
  }
  return 0;
}

int gpujit_region_report_trace(gpujit_trace *t, const gpujit_region_report *r, double start_us, int per_unit)
{
  lanes *all = NULL;
  size_t nlanes = 0;
  uint64_t t0 = UINT64_MAX;
  int err = 0;
  if (!t || !r)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_region_report_trace: NULL argument");
  for (size_t i = 0; i < r->nslices; i++)
    if (r->slices[i].start_ns < t0)
      t0 = r->slices[i].start_ns;
  /* slices are grouped by unit (each unit's in the order it ran them) */
  for (size_t a = 0, b; a < r->nslices && err == 0; a = b) {
    uint64_t first = UINT64_MAX, last = 0;
    int64_t tid = 0;
    for (b = a; b < r->nslices && r->slices[b].unit == r->slices[a].unit && r->slices[b].sm == r->slices[a].sm; b++) {
      if (r->slices[b].start_ns < first)
        first = r->slices[b].start_ns;
      if (r->slices[b].start_ns + r->slices[b].dur_ns > last)
        last = r->slices[b].start_ns + r->slices[b].dur_ns;
    }
    if (per_unit) {
      char name[64];
      snprintf(name, sizeof(name), "SM %u %s %u", r->slices[a].sm, scope_name(r->scope), r->slices[a].unit);
      err = gpujit_trace_track(t, &tid, name);
    } else {
      lanes *l = lanes_of(&all, &nlanes, r->slices[a].sm);
      err = l ? lane_track(t, l, first, last, &tid) : gpujit__error(GPUJIT_ENOMEM, "out of memory");
    }
    if (err == 0)
      err = trace_unit(t, r, a, b, tid, t0, start_us);
  }
  free(all);
  return err;
}
