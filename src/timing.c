/* The event-timing layer: timed regions over gpujit's wrappers, reports, statistics, timers,
 * and benchmarks with a noise-based stopping rule. */
#define _GNU_SOURCE
#include <math.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

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

static int take_event(gpujit_device *g, CUevent *out)
{
  if (g->npool) {
    *out = g->pool[--g->npool];
    return 0;
  }
  return CU(g->d->cuEventCreate(out, CU_EVENT_DEFAULT), "cuEventCreate");
}

static void give_event(gpujit_device *g, CUevent e)
{
  if (g->npool == g->cappool) {
    size_t cap = g->cappool ? g->cappool * 2 : 64;
    CUevent *p = realloc(g->pool, cap * sizeof(*p));
    if (!p) {
      g->d->cuEventDestroy(e);
      return;
    }
    g->pool = p;
    g->cappool = cap;
  }
  g->pool[g->npool++] = e;
}

gpujit__record *gpujit__timing_pre(gpujit_device *g, gpujit_activity_kind kind, const char *name, uint64_t bytes)
{
  gpujit__record *r;
  if (!g->depth || g->capturing || !(g->any_filter & kind_filter(kind)))
    return NULL;
  if (g->nrec == g->caprec) {
    size_t cap = g->caprec ? g->caprec * 2 : 256;
    gpujit__record *p = realloc(g->recs, cap * sizeof(*p));
    if (!p)
      return NULL;
    g->recs = p;
    g->caprec = cap;
  }
  r = &g->recs[g->nrec];
  memset(r, 0, sizeof(*r));
  if (take_event(g, &r->start) < 0)
    return NULL;
  if (take_event(g, &r->end) < 0) {
    give_event(g, r->start);
    return NULL;
  }
  r->kind = kind;
  snprintf(r->name, sizeof(r->name), "%s", name);
  r->bytes = bytes;
  r->order = g->order++;
  r->host_us = gpujit__now_us();
  g->d->cuEventRecord(r->start, g->stream);
  g->nrec++;
  return r;
}

void gpujit__timing_post(gpujit_device *g, gpujit__record *r, double launch_us)
{
  r->launch_us = launch_us;
  g->d->cuEventRecord(r->end, g->stream);
}

void gpujit__timing_release(gpujit_device *g)
{
  for (size_t i = 0; i < g->nrec; i++) {
    g->d->cuEventDestroy(g->recs[i].start);
    g->d->cuEventDestroy(g->recs[i].end);
  }
  for (size_t i = 0; i < g->npool; i++)
    g->d->cuEventDestroy(g->pool[i]);
  if (g->ref_event)
    g->d->cuEventDestroy(g->ref_event);
  free(g->recs);
  free(g->pool);
  g->recs = NULL;
  g->pool = NULL;
  g->nrec = g->caprec = g->npool = g->cappool = 0;
  g->ref_event = NULL;
}

int gpujit_timing_begin(gpujit_device *g, unsigned filter)
{
  int err;
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_begin: NULL device");
  if (g->depth == GPUJIT__MAX_TIMING_DEPTH)
    return gpujit__error(GPUJIT_EINVAL, "timing regions nest at most %d deep", GPUJIT__MAX_TIMING_DEPTH);
  if (!(filter & GPUJIT_TIMING_ALL))
    return gpujit__error(GPUJIT_EINVAL, "timing filter 0x%x selects nothing", filter);
  g->d->cuCtxSetCurrent(g->ctx);
  if (g->depth == 0) {
    /* A reference event, waited for, pins GPU time to the host clock for the trace. */
    if (!g->ref_event && (err = take_event(g, &g->ref_event)) < 0)
      return err;
    if ((err = CU(g->d->cuEventRecord(g->ref_event, g->stream), "cuEventRecord")) < 0 ||
        (err = CU(g->d->cuEventSynchronize(g->ref_event), "cuEventSynchronize")) < 0)
      return err;
    g->ref_host_us = gpujit__now_us();
  }
  g->filters[g->depth] = filter;
  g->starts[g->depth] = g->nrec;
  g->depth++;
  g->any_filter |= filter;
  return 0;
}

int gpujit_timing_end(gpujit_timing_result **out, size_t *count, gpujit_device *g)
{
  gpujit_timing_result *res = NULL;
  size_t n = 0, from;
  unsigned filter;
  int err = 0;
  if (!out || !count || !g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_end: NULL argument");
  *out = NULL;
  *count = 0;
  if (!g->depth)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_end without gpujit_timing_begin");
  g->depth--;
  filter = g->filters[g->depth];
  from = g->starts[g->depth];
  g->any_filter = 0;
  for (unsigned i = 0; i < g->depth; i++)
    g->any_filter |= g->filters[i];
  if ((err = gpujit_synchronize(g)) < 0)
    goto done;
  if (g->nrec > from && !(res = calloc(g->nrec - from, sizeof(*res)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = from; i < g->nrec; i++) {
    gpujit__record *r = &g->recs[i];
    gpujit_timing_result *o;
    float ms = 0, off = 0;
    if (!(filter & kind_filter(r->kind)))
      continue; /* recorded for an enclosing region */
    if ((err = CU(g->d->cuEventElapsedTime(&ms, r->start, r->end), "cuEventElapsedTime")) < 0)
      goto done;
    g->d->cuEventElapsedTime(&off, g->ref_event, r->start);
    o = &res[n++];
    o->device = g->info.ordinal;
    snprintf(o->name, sizeof(o->name), "%s", r->name);
    o->kind = r->kind;
    o->elapsed_ms = ms;
    o->order = r->order;
    o->host_us = r->host_us;
    o->launch_us = r->launch_us;
    o->bytes = r->bytes;
    o->start_us = g->ref_host_us + (double)off * 1e3;
  }
  if (g->report && n)
    g->report(res, n, g->report_payload);
done:
  if (g->depth == 0) { /* records are kept for enclosing regions; the outermost frees them */
    for (size_t i = 0; i < g->nrec; i++) {
      give_event(g, g->recs[i].start);
      give_event(g, g->recs[i].end);
    }
    g->nrec = 0;
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
  if (!g)
    return;
  g->report = cb;
  g->report_payload = payload;
}

const char *gpujit_activity_kind_name(gpujit_activity_kind k)
{
  static const char *const names[] = {"kernel", "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memset", "graph"};
  return (unsigned)k < 6 ? names[k] : "?";
}

typedef struct agg {
  char name[160];
  double total;
  size_t count;
} agg;

static size_t aggregate(agg *rows, size_t n, const char *name, double ms)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].name, name) == 0) {
      rows[i].total += ms;
      rows[i].count++;
      return n;
    }
  snprintf(rows[n].name, sizeof(rows[n].name), "%s", name);
  rows[n].total = ms;
  rows[n].count = 1;
  return n + 1;
}

int gpujit_timing_format(char **out, const gpujit_timing_result *r, size_t n, unsigned sections)
{
  gpujit__buf b = {0};
  agg *rows = NULL;
  size_t k;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_format: NULL out");
  *out = NULL;
  if (n && !(rows = calloc(n, sizeof(*rows))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (sections & GPUJIT_REPORT_TIMELINE) {
    gpujit__buf_printf(&b, "timeline\n  %6s %-12s %12s  %s\n", "order", "kind", "ms", "name");
    for (size_t i = 0; i < n; i++)
      gpujit__buf_printf(&b, "  %6llu %-12s %12.6f  %s\n", (unsigned long long)r[i].order, gpujit_activity_kind_name(r[i].kind),
                         r[i].elapsed_ms, r[i].name);
  }
  if (sections & GPUJIT_REPORT_ACTIVITY) {
    k = 0;
    for (size_t i = 0; i < n; i++)
      k = aggregate(rows, k, r[i].name, r[i].elapsed_ms);
    gpujit__buf_printf(&b, "activity summary\n  %12s %8s %12s  %s\n", "total ms", "count", "mean ms", "name");
    for (size_t i = 0; i < k; i++)
      gpujit__buf_printf(&b, "  %12.6f %8zu %12.6f  %s\n", rows[i].total, rows[i].count,
                         rows[i].total / (double)rows[i].count, rows[i].name);
  }
  if (sections & GPUJIT_REPORT_DEVICE) {
    k = 0;
    for (size_t i = 0; i < n; i++) {
      char dev[32];
      snprintf(dev, sizeof(dev), "device %d", r[i].device);
      k = aggregate(rows, k, dev, r[i].elapsed_ms);
    }
    gpujit__buf_printf(&b, "device summary\n  %12s %8s  %s\n", "total ms", "count", "device");
    for (size_t i = 0; i < k; i++)
      gpujit__buf_printf(&b, "  %12.6f %8zu  %s\n", rows[i].total, rows[i].count, rows[i].name);
  }
  free(rows);
  if (!b.data && gpujit__buf_puts(&b, "") < 0)
    return GPUJIT_ENOMEM;
  *out = b.data;
  return 0;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int gpujit_stats_compute(gpujit_stats *out, const double *s, size_t n)
{
  double *v, sum = 0, sq = 0;
  if (!out || !s || n == 0)
    return gpujit__error(GPUJIT_EINVAL, "statistics of an empty sample");
  if (!(v = malloc(n * sizeof(*v))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  memcpy(v, s, n * sizeof(*v));
  qsort(v, n, sizeof(*v), cmp_double);
  for (size_t i = 0; i < n; i++)
    sum += v[i];
  out->n = n;
  out->min = v[0];
  out->max = v[n - 1];
  out->mean = sum / (double)n;
  out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  for (size_t i = 0; i < n; i++)
    sq += (v[i] - out->mean) * (v[i] - out->mean);
  out->stdev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
  /* Noise: the median absolute deviation, scaled to a normal stdev (1.4826), over the median.
   * A few outliers (a clock ramp, a preempted sample) do not hold a benchmark hostage. */
  for (size_t i = 0; i < n; i++)
    v[i] = fabs(v[i] - out->median);
  qsort(v, n, sizeof(*v), cmp_double);
  out->noise = out->median > 0 ? 1.4826 * (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) / out->median : 0;
  free(v);
  return 0;
}

struct gpujit_timer {
  gpujit_device *dev;
  unsigned flags;
  double t0;
  char name[128];
};

int gpujit_timer_start(gpujit_timer **out, gpujit_device *dev, const char *name, unsigned flags, uint32_t color)
{
  gpujit_timer *t;
  int err;
  if (!out || !name)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timer_start: NULL argument");
  if (!(t = calloc(1, sizeof(*t))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  t->dev = dev;
  t->flags = flags;
  snprintf(t->name, sizeof(t->name), "%s", name);
  if ((flags & GPUJIT_TIMER_SYNCHRONIZE) && dev && (err = gpujit_synchronize(dev)) < 0) {
    free(t);
    return err;
  }
  if (flags & GPUJIT_TIMER_NVTX) {
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof(a));
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = color ? color : 0xff76b900u;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = t->name;
    nvtxRangePushEx(&a);
  }
  t->t0 = gpujit__now_us();
  *out = t;
  return 0;
}

const char *gpujit_timer_name(const gpujit_timer *t) { return t ? t->name : NULL; }

int gpujit_timer_stop(gpujit_timer *t, double *elapsed_ms)
{
  int err = 0;
  if (!t)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timer_stop: NULL timer");
  if ((t->flags & GPUJIT_TIMER_SYNCHRONIZE) && t->dev)
    err = gpujit_synchronize(t->dev);
  if (elapsed_ms)
    *elapsed_ms = (gpujit__now_us() - t->t0) / 1e3;
  if (t->flags & GPUJIT_TIMER_NVTX)
    nvtxRangePop();
  free(t);
  return err;
}

int gpujit_bench_should_stop(const double *s, size_t n, double elapsed_s, const gpujit_bench_options *o,
                             gpujit_bench_stop *reason)
{
  gpujit_stats st;
  if (o->timeout_s > 0 && elapsed_s >= o->timeout_s) {
    *reason = GPUJIT_BENCH_STOP_TIMEOUT;
    return 1;
  }
  if (n >= o->max_samples) {
    *reason = GPUJIT_BENCH_STOP_MAX_SAMPLES;
    return 1;
  }
  if (n < o->min_samples || n < 2 || elapsed_s < o->min_time_s)
    return 0;
  if (gpujit_stats_compute(&st, s, n) < 0)
    return 0;
  if (st.noise < o->max_noise) {
    *reason = GPUJIT_BENCH_STOP_NOISE;
    return 1;
  }
  return 0;
}

/*
 * Samples are issued in batches that keep the GPU busy: each sample is bracketed by its own
 * event pair, nothing waits between samples, and the host synchronises once per batch. Per-
 * sample synchronisation would let the GPU idle (and its clocks drop) between samples and
 * would fold launch latency into every GPU time.
 */
#define GPUJIT__BENCH_BATCH 32

int gpujit_benchmark(gpujit_bench_result *out, double **samples_out, gpujit_device *g, gpujit_bench_fn fn,
                     void *payload, const gpujit_bench_options *opts)
{
  gpujit_bench_options defaults = GPUJIT_BENCH_OPTIONS_INIT;
  double *gpu = NULL, *cpu = NULL, t_start;
  size_t n = 0, cap = 0, taken = 0;
  CUevent ev[2 * GPUJIT__BENCH_BATCH];
  int err = 0;

  if (samples_out)
    *samples_out = NULL;
  if (!out || !g || !fn)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_benchmark: NULL argument");
  if (!opts)
    opts = &defaults;
  if (opts->version != GPUJIT_BENCH_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "bench options version %u is not supported", opts->version);
  if (opts->max_samples < 1 || opts->min_samples > opts->max_samples)
    return gpujit__error(GPUJIT_EINVAL, "bench options: min_samples %u > max_samples %u", opts->min_samples,
                         opts->max_samples);
  memset(out, 0, sizeof(*out));
  g->d->cuCtxSetCurrent(g->ctx);
  for (; taken < 2 * GPUJIT__BENCH_BATCH; taken++)
    if ((err = take_event(g, &ev[taken])) < 0)
      goto done;
  if (opts->l2_flush && !g->flush_buf) {
    g->flush_bytes = (size_t)(g->info.l2_bytes > 0 ? g->info.l2_bytes : 64 << 20) * 2;
    if ((err = gpujit_mem_alloc(&g->flush_buf, g, g->flush_bytes)) < 0)
      goto done;
  }
  for (unsigned i = 0; i < opts->warmup; i++)
    if ((err = fn(payload)) < 0)
      goto done;
  if ((err = gpujit_synchronize(g)) < 0)
    goto done;
  t_start = gpujit__now_us();
  for (bool stop = false; !stop;) {
    size_t batch = GPUJIT__BENCH_BATCH;
    if (n + batch > opts->max_samples)
      batch = opts->max_samples - n;
    if (n + batch > cap) {
      size_t c = cap ? cap * 2 : 1024;
      double *pg, *pc;
      while (c < n + batch)
        c *= 2;
      pg = realloc(gpu, c * sizeof(*pg));
      if (pg)
        gpu = pg;
      pc = realloc(cpu, c * sizeof(*pc));
      if (pc)
        cpu = pc;
      if (!pg || !pc) {
        err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
        goto done;
      }
      cap = c;
    }
    for (size_t i = 0; i < batch; i++) {
      double t0;
      if (opts->l2_flush) /* overwrite L2 so the sample starts cold */
        g->d->cuMemsetD32Async((CUdeviceptr)g->flush_buf, (unsigned)(n + i), g->flush_bytes / 4, g->stream);
      g->d->cuEventRecord(ev[2 * i], g->stream);
      t0 = gpujit__now_us();
      if ((err = fn(payload)) < 0)
        goto done;
      cpu[n + i] = (gpujit__now_us() - t0) / 1e3;
      g->d->cuEventRecord(ev[2 * i + 1], g->stream);
    }
    if ((err = CU(g->d->cuEventSynchronize(ev[2 * batch - 1]), "benchmark sample")) < 0)
      goto done;
    for (size_t i = 0; i < batch; i++) {
      float ms = 0;
      g->d->cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
      gpu[n + i] = ms;
    }
    n += batch;
    stop = gpujit_bench_should_stop(gpu, n, (gpujit__now_us() - t_start) / 1e6, opts, &out->stop);
  }
  out->elapsed_s = (gpujit__now_us() - t_start) / 1e6;
  gpujit_stats_compute(&out->gpu, gpu, n);
  gpujit_stats_compute(&out->cpu, cpu, n);
  if (samples_out) {
    *samples_out = gpu;
    gpu = NULL;
  }
done:
  while (taken)
    give_event(g, ev[--taken]);
  free(gpu);
  free(cpu);
  return err;
}
