/* Timed regions: the timing layer installs itself as a device's activity hooks and records an
 * event pair around each activity that an open region's filter selects. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "timing/regions.h"

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

/* A record's name: the kernel's (or activity's) name, copied without printf. */
static inline void set_name(gpujit__record *r, const char *name)
{
  size_t n = strnlen(name, sizeof(r->name) - 1);
  memcpy(r->name, name, n);
  r->name[n] = '\0';
}

/* Grow the records out of line: the launch path only compares. */
static gpujit__record *more_records(gpujit__timing *t)
{
  gpujit__record *r = gpujit__grow(t->recs, &t->caprec, t->nrec, sizeof(*r), 256);
  if (r)
    t->recs = r;
  return r;
}

/*
 * Hook: before an activity, while a region is open. The launch path's share of a timed launch:
 * a record filled field by field (no memset, no printf, no clock read: the launch path reads the
 * clock once after this and hands it to `after`), and for events the two events popped from the
 * pool; for CUPTI no CUPTI call where the callback ties (a thread-local zeroed), else the id pushed.
 */
static void *before(gpujit_device *g, void *payload, gpujit_activity_kind kind, const char *name,
                    uint64_t bytes, struct gpujit_loaded *owner)
{
  gpujit__timing *t = payload;
  gpujit__record *r;
  if (owner && owner->regions_events && !g->capturing)
    gpujit__rwatch_launch(t, owner);
  if (!t->depth || g->capturing || !(t->any_filter & kind_filter(kind)))
    return NULL;
  if (t->nrec == t->caprec && !more_records(t))
    return NULL;
  r = &t->recs[t->nrec];
  if (t->source == GPUJIT_TIMER_EVENTS) {
    if (t->npool >= 2) {
      r->start = t->pool[--t->npool];
      r->end = t->pool[--t->npool];
    } else {
      if (gpujit__timing_take_event(t, &r->start) < 0)
        return NULL;
      if (gpujit__timing_take_event(t, &r->end) < 0) {
        gpujit__timing_give_event(t, r->start);
        return NULL;
      }
    }
  } else {
    r->start = r->end = NULL; /* CUPTI times it: no event enters the stream */
    r->first_act = r->nacts = 0;
    r->corr = 0;
  }
  r->kind = kind;
  r->owner = owner;
  set_name(r, name);
  r->bytes = bytes;
  r->order = t->order++;
  r->host_us = r->launch_us = 0;
  t->nrec++;
  if (t->source == GPUJIT_TIMER_EVENTS)
    g->d->cuEventRecord(r->start, g->stream);
  else if (t->by_callback)
    gpujit__cupti_corr = 0; /* a call the callback misses reads 0 (missing), never an older call's id */
  else
    gpujit__cupti_push(t->id_base + t->nrec - 1);
  return r;
}

/* Hook: after the activity was enqueued. */
static void after(gpujit_device *g, void *payload, void *token, double host_us, double launch_us)
{
  gpujit__record *r = token;
  gpujit__timing *t = payload;
  r->host_us = host_us;
  r->launch_us = launch_us;
  if (t->source == GPUJIT_TIMER_EVENTS)
    g->d->cuEventRecord(r->end, g->stream);
  else if (t->by_callback)
    r->corr = gpujit__cupti_corr;
  else
    gpujit__cupti_pop();
}

/* Hook: the device goes away; its stream is synchronised. */
static void detach(gpujit_device *g, void *payload)
{
  gpujit__timing *t = payload;
  if (t->depth && t->source != GPUJIT_TIMER_EVENTS)
    gpujit__cupti_window_close(); /* freed inside a region: its window closes with it */
  for (size_t i = 0; i < t->nrec && t->source == GPUJIT_TIMER_EVENTS; i++) {
    g->d->cuEventDestroy(t->recs[i].start);
    g->d->cuEventDestroy(t->recs[i].end);
  }
  free(t->acts);
  gpujit__rwatch_free(t);
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

/* Hook: a module goes away. */
static void unload(gpujit_device *g, void *payload, struct gpujit_loaded *l)
{
  (void)g;
  gpujit__rwatch_forget(payload, l);
}

static const gpujit__activity_hooks hooks = {before, after, detach, unload};

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
  t->id_base = 1;
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
  gpujit__ctx_use(g);
  if (t->depth == 0) {
    /* A reference event, waited for, pins GPU time to the host clock for the trace. */
    if (!t->ref_event && (err = gpujit__timing_take_event(t, &t->ref_event)) < 0)
      return err;
    if ((err = CU(g->d->cuEventRecord(t->ref_event, g->stream), "cuEventRecord")) < 0 ||
        (err = CU(g->d->cuEventSynchronize(t->ref_event), "cuEventSynchronize")) < 0)
      return err;
    t->ref_host_us = gpujit__now_us();
    if (t->source != GPUJIT_TIMER_EVENTS) {
      t->by_callback = gpujit__cupti_by_callback();
      if (!t->by_callback && (err = gpujit__cupti_external(true)) < 0)
        return err;
      t->id_base = gpujit__cupti_window_open();
    }
  }
  /* a window of its own for kernel regions: the launches it covers */
  if ((err = gpujit__rwatch_open(t, &t->rtimer[t->depth])) < 0)
    return err;
  t->filters[t->depth] = filter;
  t->starts[t->depth] = t->nrec;
  t->depth++;
  t->any_filter |= filter;
  gpujit__device_hooks_enable(g, true);
  return 0;
}

static int cmp_act(const void *a, const void *b)
{
  const gpujit__cupti_rec *x = a, *y = b;
  if (x->external != y->external)
    return x->external < y->external ? -1 : 1;
  if (x->graph_node != y->graph_node) /* a graph's nodes in their order */
    return x->graph_node < y->graph_node ? -1 : 1;
  return (x->start > y->start) - (x->start < y->start);
}

typedef struct corr_rec {
  uint32_t corr;
  uint32_t rec;
} corr_rec;

static int cmp_corr_rec(const void *a, const void *b)
{
  const corr_rec *x = a, *y = b;
  return (x->corr > y->corr) - (x->corr < y->corr);
}

/* CUPTI, tied by callback: take the records of the correlation ids the records got, each given
 * the external id its record would have had (id_base + its index), as the external ids tie them. */
static int take_by_corr(gpujit__timing *t, gpujit__cupti_rec **got, size_t *n)
{
  corr_rec *map = malloc(t->nrec * sizeof(*map));
  uint32_t *ids = malloc(t->nrec * sizeof(*ids));
  size_t m = 0;
  bool sorted = true;
  int err = 0;
  if (!map || !ids) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < t->nrec; i++)
    if (t->recs[i].corr) {
      sorted &= m == 0 || map[m - 1].corr < t->recs[i].corr; /* one thread's calls: ascending */
      map[m++] = (corr_rec){t->recs[i].corr, (uint32_t)i};
    }
  if (!sorted)
    qsort(map, m, sizeof(*map), cmp_corr_rec);
  for (size_t i = 0; i < m; i++)
    ids[i] = map[i].corr;
  if ((err = gpujit__cupti_take_corr(got, n, ids, m, &t->dropped)) < 0)
    goto done;
  for (size_t i = 0; i < *n; i++) {
    corr_rec key = {(uint32_t)(*got)[i].external, 0};
    const corr_rec *hit = bsearch(&key, map, m, sizeof(*map), cmp_corr_rec);
    (*got)[i].external = t->id_base + hit->rec; /* taken only for ids in the map */
  }
done:
  free(map);
  free(ids);
  return err;
}

/* CUPTI: take the records of every activity recorded so far and give each its own. */
static int attach_acts(gpujit__timing *t)
{
  gpujit__cupti_rec *got = NULL, *all;
  size_t n = 0;
  int err;
  if (!t->nrec)
    return 0;
  if (t->by_callback)
    err = take_by_corr(t, &got, &n);
  else
    err = gpujit__cupti_take(&got, &n, t->id_base, t->id_base + t->nrec - 1, &t->dropped);
  if (err < 0)
    return err;
  if (!n)
    return 0;
  qsort(got, n, sizeof(*got), cmp_act);
  if (!(all = gpujit__grow_to(t->acts, &t->capacts, t->nacts + n, sizeof(*all), 256))) {
    free(got);
    return GPUJIT_ENOMEM;
  }
  t->acts = all;
  for (size_t i = 0; i < n; i++) {
    gpujit__record *r = &t->recs[got[i].external - t->id_base];
    if (!r->nacts)
      r->first_act = t->nacts;
    if (r->first_act + r->nacts == t->nacts) /* a record's activities lie together */
      r->nacts++;
    t->acts[t->nacts++] = got[i];
  }
  free(got);
  return 0;
}

static void fill(gpujit_timing_result *o, const gpujit__timing *t, const gpujit__record *r, const char *name,
                 gpujit_activity_kind kind, double ms, double start_us)
{
  o->device = t->dev->info.ordinal;
  snprintf(o->name, sizeof(o->name), "%s", name);
  o->kind = kind;
  o->elapsed_ms = ms;
  o->order = r->order;
  o->host_us = r->host_us;
  o->launch_us = r->launch_us;
  o->bytes = r->bytes;
  o->start_us = start_us;
}

/* One record's results from CUPTI: one, or for a graph each kernel node then the graph. */
static size_t cupti_results(gpujit_timing_result *o, const gpujit__timing *t, const gpujit__record *r)
{
  const gpujit__cupti_rec *a = &t->acts[r->first_act];
  double off = gpujit__cupti_clock_offset_us();
  uint64_t lo = UINT64_MAX, hi = 0;
  size_t n = 0;
  if (!r->nacts) {
    fill(o, t, r, r->name, r->kind, 0, r->host_us);
    o->missing = 1;
    return 1;
  }
  int untimed = 0;
  for (size_t i = 0; i < r->nacts; i++) {
    /* CUPTI 13.0's serialised kind times only a graph's first node (measured on the H100 host;
     * the concurrent kind times them all): a record without times is reported missing */
    bool timed = a[i].start && a[i].end >= a[i].start;
    untimed += !timed;
    if (timed) {
      lo = a[i].start < lo ? a[i].start : lo;
      hi = a[i].end > hi ? a[i].end : hi;
    }
    if (r->kind == GPUJIT_ACTIVITY_GRAPH && a[i].kind == 0) {
      char name[160];
      snprintf(name, sizeof(name), "%s: %s", r->name, a[i].name);
      fill(&o[n], t, r, name, GPUJIT_ACTIVITY_KERNEL, timed ? (double)(a[i].end - a[i].start) / 1e6 : 0,
           timed ? (double)a[i].start / 1e3 - off : r->host_us);
      o[n].missing = !timed;
      o[n++].graph_node = a[i].graph_node;
    }
  }
  /* a kernel, copy or memset: its record; a graph: first start to last end, when all are timed */
  fill(&o[n], t, r, r->name, r->kind, untimed || hi < lo ? 0 : (double)(hi - lo) / 1e6,
       hi < lo ? r->host_us : (double)lo / 1e3 - off);
  o[n].missing = untimed > 0 || hi < lo;
  return n + 1;
}

int gpujit_timing_end(gpujit_timing_result **out, size_t *count, gpujit_device *g)
{
  gpujit_timing_result *res = NULL;
  gpujit__timing *t = NULL;
  size_t n = 0, from;
  unsigned filter;
  gpujit__rwin *w; /* its kernel-regions window */
  int err = 0;
  if (!out || !count || !g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_end: NULL argument");
  *out = NULL;
  *count = 0;
  if (g->hooks == NULL || gpujit__timing_of(g, &t) < 0 || !t->depth)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_end without gpujit_timing_begin");
  t->depth--;
  if (t->depth == 0 && t->source != GPUJIT_TIMER_EVENTS)
    gpujit__cupti_window_close(); /* before its records are taken: others' are no longer kept for it */
  filter = t->filters[t->depth];
  from = t->starts[t->depth];
  t->any_filter = 0;
  for (unsigned i = 0; i < t->depth; i++)
    t->any_filter |= t->filters[i];
  w = t->rtimer[t->depth];
  t->rtimer[t->depth] = NULL;
  gpujit__device_hooks_enable(g, t->depth > 0 || t->nwins);
  if ((err = gpujit_synchronize(g)) < 0)
    goto done;
  if (t->source != GPUJIT_TIMER_EVENTS && (err = attach_acts(t)) < 0)
    goto done;
  if (t->nrec > from && !(res = calloc(t->nrec - from + t->nacts, sizeof(*res)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = from; i < t->nrec; i++) {
    gpujit__record *r = &t->recs[i];
    float ms = 0, off = 0;
    if (!(filter & kind_filter(r->kind)))
      continue; /* recorded for an enclosing region */
    if (t->source != GPUJIT_TIMER_EVENTS) {
      n += cupti_results(&res[n], t, r);
      if (r->owner)
        gpujit__rwatch_time(w, r->owner, res[n - 1].elapsed_ms);
      continue;
    }
    if ((err = CU(g->d->cuEventElapsedTime(&ms, r->start, r->end), "cuEventElapsedTime")) < 0)
      goto done;
    g->d->cuEventElapsedTime(&off, t->ref_event, r->start);
    fill(&res[n++], t, r, r->name, r->kind, ms, t->ref_host_us + (double)off * 1e3);
    if (r->owner)
      gpujit__rwatch_time(w, r->owner, ms);
  }
  err = gpujit__rwatch_close(t, w, 0);
  w = NULL;
  if (err < 0)
    goto done;
  if (t->report && n)
    t->report(res, n, t->report_payload);
done:
  gpujit__rwatch_close(t, w, 0); /* a failure before the window closed: closed, the first error kept */
  if (t->depth == 0) { /* records are kept for enclosing regions; the outermost frees them */
    for (size_t i = 0; i < t->nrec && t->source == GPUJIT_TIMER_EVENTS; i++) {
      gpujit__timing_give_event(t, t->recs[i].start);
      gpujit__timing_give_event(t, t->recs[i].end);
    }
    t->id_base += t->nrec; /* events: unused; CUPTI: the next window takes a block of its own */
    t->nrec = 0;
    t->nacts = 0;
  }
  if (err < 0) {
    free(res);
    return err;
  }
  *out = res;
  *count = n;
  return 0;
}

const char *gpujit_timer_source_name(gpujit_timer_source s)
{
  switch (s) {
  case GPUJIT_TIMER_EVENTS: return "events";
  case GPUJIT_TIMER_CUPTI: return "cupti";
  case GPUJIT_TIMER_CUPTI_CONCURRENT: return "cupti-concurrent";
  default: return "unknown";
  }
}

int gpujit_timing_set_source(gpujit_device *g, gpujit_timer_source source)
{
  gpujit__timing *t = NULL;
  int err;
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_set_source: NULL device");
  if ((unsigned)source > GPUJIT_TIMER_CUPTI_CONCURRENT)
    return gpujit__error(GPUJIT_EINVAL, "unknown timer source %d", (int)source);
  if ((err = gpujit__timing_of(g, &t)) < 0)
    return err;
  if (t->depth)
    return gpujit__error(GPUJIT_EINVAL, "the timer cannot change while a timed region is open");
  if (source != GPUJIT_TIMER_EVENTS) {
    g->d->cuCtxSetCurrent(g->ctx);
    if ((err = gpujit__cupti_start(source == GPUJIT_TIMER_CUPTI_CONCURRENT)) < 0 || (err = gpujit__cupti_tie()) < 0)
      return err;
  } else if (t->source != GPUJIT_TIMER_EVENTS) {
    gpujit__cupti_stop();
  }
  t->source = source;
  return 0;
}

uint64_t gpujit_timing_dropped(gpujit_device *g)
{
  gpujit__timing *t = NULL;
  return g && gpujit__timing_of(g, &t) == 0 ? t->dropped : 0;
}

void gpujit_timing_set_report(gpujit_device *g, gpujit_timing_report_cb cb, void *payload)
{
  gpujit__timing *t = NULL;
  if (!g || gpujit__timing_of(g, &t) < 0)
    return;
  t->report = cb;
  t->report_payload = payload;
}

/* The kernel-region tables of the device's last window (timing/kregions_watch.c). */
/* Whose timing state a device has, without making one: NULL where no window ever ran. */
static gpujit__timing *timing_if_any(gpujit_device *g)
{
  gpujit__timing *t = NULL;
  if (!g || !g->hooks || gpujit__timing_of(g, &t) < 0)
    return NULL;
  return t;
}

const gpujit_region_report *gpujit_timing_regions_at(gpujit_device *g, size_t i, gpujit_loaded **loaded)
{
  gpujit__timing *t = timing_if_any(g);
  if (loaded)
    *loaded = NULL;
  if (!t || !t->last || i >= t->last->nmods)
    return NULL;
  if (loaded)
    *loaded = t->last->mods[i].l;
  return t->last->mods[i].report;
}

const gpujit_region_report *gpujit_timing_regions(gpujit_device *g, const gpujit_loaded *loaded)
{
  gpujit__timing *t = timing_if_any(g);
  for (size_t i = 0; t && t->last && i < t->last->nmods; i++)
    if (t->last->mods[i].l == loaded)
      return t->last->mods[i].report;
  return NULL;
}

/* A window that times nothing (host timers, captures): timing/kregions_watch.c. */
int gpujit_timing_regions_begin(gpujit_device *dev)
{
  gpujit__timing *t = NULL;
  gpujit__rwin **p, *w = NULL;
  int err;
  if (!dev)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_regions_begin: NULL device");
  if ((err = gpujit__timing_of(dev, &t)) < 0)
    return err;
  if (!(p = gpujit__grow(t->plain, &t->capplain, t->nplain, sizeof(*p), 4)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  t->plain = p;
  if ((err = gpujit__rwatch_open(t, &w)) < 0)
    return err;
  t->plain[t->nplain++] = w;
  return 0;
}

int gpujit_timing_regions_end(gpujit_device *dev)
{
  gpujit__timing *t = NULL;
  if (!dev)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_regions_end: NULL device");
  if (!dev->hooks || gpujit__timing_of(dev, &t) < 0 || !t->nplain)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_regions_end without gpujit_timing_regions_begin");
  return gpujit__rwatch_close(t, t->plain[--t->nplain], 0);
}
