/* Timed regions: the timing layer installs itself as a device's activity hooks and records an
 * event pair around each activity that an open region's filter selects. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "timing/regions.h"

#define CU(call, what) gpujit__cuda_error((call), (what))

static unsigned kind_filter(gpujit_activity_kind k)
{
  switch (k) {
  case GPUJIT_ACTIVITY_KERNEL: return GPUJIT_TIMING_KERNEL;
  case GPUJIT_ACTIVITY_MEMSET: return GPUJIT_TIMING_MEMSET;
  case GPUJIT_ACTIVITY_GRAPH: return GPUJIT_TIMING_GRAPH;
  default: return GPUJIT_TIMING_MEMCPY;
  }
}

int gpujit__timing_take_event(gpujit__timing *t, CUevent *out)
{
  const gpujit__driver *d = t->dev->d;
  if (t->npool) {
    *out = t->pool[--t->npool];
    return 0;
  }
  return CU(d->cuEventCreate(out, CU_EVENT_DEFAULT), "cuEventCreate");
}

void gpujit__timing_give_event(gpujit__timing *t, CUevent e)
{
  CUevent *p = gpujit__grow(t->pool, &t->cappool, t->npool, sizeof(*p), 64);
  if (!p) {
    t->dev->d->cuEventDestroy(e);
    return;
  }
  t->pool = p;
  t->pool[t->npool++] = e;
}

/* Hook: before an activity, while a region is open. */
static void *before(gpujit_device *g, void *payload, gpujit_activity_kind kind, const char *name,
                    uint64_t bytes)
{
  gpujit__timing *t = payload;
  gpujit__record *r;
  if (!t->depth || g->capturing || !(t->any_filter & kind_filter(kind)))
    return NULL;
  if (!(r = gpujit__grow(t->recs, &t->caprec, t->nrec, sizeof(*r), 256)))
    return NULL;
  t->recs = r;
  r = &t->recs[t->nrec];
  memset(r, 0, sizeof(*r));
  if (gpujit__timing_take_event(t, &r->start) < 0)
    return NULL;
  if (gpujit__timing_take_event(t, &r->end) < 0) {
    gpujit__timing_give_event(t, r->start);
    return NULL;
  }
  r->kind = kind;
  snprintf(r->name, sizeof(r->name), "%s", name);
  r->bytes = bytes;
  r->order = t->order++;
  r->host_us = gpujit__now_us();
  g->d->cuEventRecord(r->start, g->stream);
  t->nrec++;
  return r;
}

/* Hook: after the activity was enqueued. */
static void after(gpujit_device *g, void *payload, void *token, double launch_us)
{
  gpujit__record *r = token;
  (void)payload;
  r->launch_us = launch_us;
  g->d->cuEventRecord(r->end, g->stream);
}

/* Hook: the device goes away; its stream is synchronised. */
static void detach(gpujit_device *g, void *payload)
{
  gpujit__timing *t = payload;
  for (size_t i = 0; i < t->nrec; i++) {
    g->d->cuEventDestroy(t->recs[i].start);
    g->d->cuEventDestroy(t->recs[i].end);
  }
  for (size_t i = 0; i < t->npool; i++)
    g->d->cuEventDestroy(t->pool[i]);
  if (t->ref_event)
    g->d->cuEventDestroy(t->ref_event);
  if (t->flush_buf)
    g->d->cuMemFree((CUdeviceptr)t->flush_buf);
  free(t->recs);
  free(t->pool);
  free(t);
  gpujit__device_set_hooks(g, NULL, NULL);
}

static const gpujit__activity_hooks hooks = {before, after, detach};

int gpujit__timing_of(gpujit_device *g, gpujit__timing **out)
{
  gpujit__timing *t = NULL;
  if (g->hooks == &hooks) {
    *out = g->hooks_payload;
    return 0;
  }
  if (g->hooks)
    return gpujit__error(GPUJIT_EINVAL, "the device's activity hooks are taken");
  if (!(t = calloc(1, sizeof(*t))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  t->dev = g;
  gpujit__device_set_hooks(g, &hooks, t);
  *out = t;
  return 0;
}

int gpujit_timing_begin(gpujit_device *g, unsigned filter)
{
  gpujit__timing *t = NULL;
  int err;
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_begin: NULL device");
  if ((err = gpujit__timing_of(g, &t)) < 0)
    return err;
  if (t->depth == GPUJIT__MAX_TIMING_DEPTH)
    return gpujit__error(GPUJIT_EINVAL, "timing regions nest at most %d deep", GPUJIT__MAX_TIMING_DEPTH);
  if (!(filter & GPUJIT_TIMING_ALL))
    return gpujit__error(GPUJIT_EINVAL, "timing filter 0x%x selects nothing", filter);
  g->d->cuCtxSetCurrent(g->ctx);
  if (t->depth == 0) {
    /* A reference event, waited for, pins GPU time to the host clock for the trace. */
    if (!t->ref_event && (err = gpujit__timing_take_event(t, &t->ref_event)) < 0)
      return err;
    if ((err = CU(g->d->cuEventRecord(t->ref_event, g->stream), "cuEventRecord")) < 0 ||
        (err = CU(g->d->cuEventSynchronize(t->ref_event), "cuEventSynchronize")) < 0)
      return err;
    t->ref_host_us = gpujit__now_us();
  }
  t->filters[t->depth] = filter;
  t->starts[t->depth] = t->nrec;
  t->depth++;
  t->any_filter |= filter;
  gpujit__device_hooks_enable(g, true);
  return 0;
}

int gpujit_timing_end(gpujit_timing_result **out, size_t *count, gpujit_device *g)
{
  gpujit_timing_result *res = NULL;
  gpujit__timing *t = NULL;
  size_t n = 0, from;
  unsigned filter;
  int err = 0;
  if (!out || !count || !g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_end: NULL argument");
  *out = NULL;
  *count = 0;
  if (g->hooks == NULL || gpujit__timing_of(g, &t) < 0 || !t->depth)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_end without gpujit_timing_begin");
  t->depth--;
  filter = t->filters[t->depth];
  from = t->starts[t->depth];
  t->any_filter = 0;
  for (unsigned i = 0; i < t->depth; i++)
    t->any_filter |= t->filters[i];
  gpujit__device_hooks_enable(g, t->depth > 0);
  if ((err = gpujit_synchronize(g)) < 0)
    goto done;
  if (t->nrec > from && !(res = calloc(t->nrec - from, sizeof(*res)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = from; i < t->nrec; i++) {
    gpujit__record *r = &t->recs[i];
    gpujit_timing_result *o;
    float ms = 0, off = 0;
    if (!(filter & kind_filter(r->kind)))
      continue; /* recorded for an enclosing region */
    if ((err = CU(g->d->cuEventElapsedTime(&ms, r->start, r->end), "cuEventElapsedTime")) < 0)
      goto done;
    g->d->cuEventElapsedTime(&off, t->ref_event, r->start);
    o = &res[n++];
    o->device = g->info.ordinal;
    snprintf(o->name, sizeof(o->name), "%s", r->name);
    o->kind = r->kind;
    o->elapsed_ms = ms;
    o->order = r->order;
    o->host_us = r->host_us;
    o->launch_us = r->launch_us;
    o->bytes = r->bytes;
    o->start_us = t->ref_host_us + (double)off * 1e3;
  }
  if (t->report && n)
    t->report(res, n, t->report_payload);
done:
  if (t->depth == 0) { /* records are kept for enclosing regions; the outermost frees them */
    for (size_t i = 0; i < t->nrec; i++) {
      gpujit__timing_give_event(t, t->recs[i].start);
      gpujit__timing_give_event(t, t->recs[i].end);
    }
    t->nrec = 0;
  }
  if (err < 0) {
    free(res);
    return err;
  }
  *out = res;
  *count = n;
  return 0;
}

void gpujit_timing_set_report(gpujit_device *g, gpujit_timing_report_cb cb, void *payload)
{
  gpujit__timing *t = NULL;
  if (!g || gpujit__timing_of(g, &t) < 0)
    return;
  t->report = cb;
  t->report_payload = payload;
}

