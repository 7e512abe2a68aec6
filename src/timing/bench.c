/* Host timers (synchronising, NVTX ranges) and benchmarks with a noise-based stopping rule. */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "timing/regions.h"

struct gpujit_timer {
  gpujit_device *dev;
  gpujit__rwin *window; /* its kernel-regions window on dev */
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
  if ((flags & GPUJIT_TIMER_SYNCHRONIZE) && dev && (err = gpujit_device_synchronize(dev)) < 0) {
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
  /* the kernel regions of dev's launches meanwhile (a device whose hooks another layer holds: none) */
  if (dev) {
    gpujit__timing *tm = NULL;
    if (gpujit__timing_of(dev, &tm) < 0 || gpujit__rwatch_open(tm, &t->window) < 0)
      gpujit_error_clear();
  }
  t->t0 = gpujit__now_us();
  *out = t;
  return 0;
}

const char *gpujit_timer_name(const gpujit_timer *t) { return t ? t->name : NULL; }

int gpujit_timer_stop(gpujit_timer *t, double *elapsed_ms)
{
  int err = 0, e;
  if (!t)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timer_stop: NULL timer");
  if ((t->flags & GPUJIT_TIMER_SYNCHRONIZE) && t->dev)
    err = gpujit_device_synchronize(t->dev);
  if (elapsed_ms)
    *elapsed_ms = (gpujit__now_us() - t->t0) / 1e3;
  if (t->window) { /* reading the tables, after the elapsed time was taken */
    gpujit__timing *tm = NULL;
    if (gpujit__timing_of(t->dev, &tm) == 0 && (e = gpujit__rwatch_close(tm, t->window, 0)) < 0 && err == 0)
      err = e;
  }
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

/* CUPTI samples carry ids of their own, far above the regions' (which count from 1). */
#define BENCH_IDS ((uint64_t)1 << 62)

/* CUPTI: each sample's GPU time is the sum of its activities' durations (events measure from the
 * first to the last, idle gaps between launches included). */
static int cupti_samples(double *gpu, uint64_t first, size_t count)
{
  gpujit__cupti_rec *recs = NULL;
  size_t n = 0, missing = 0;
  int err;
  if ((err = gpujit__cupti_take(&recs, &n, first, first + count - 1, NULL)) < 0)
    return err;
  for (size_t i = 0; i < count; i++)
    gpu[i] = -1;
  for (size_t k = 0; k < n; k++) {
    double *v = &gpu[recs[k].external - first];
    if (!recs[k].start || recs[k].end < recs[k].start)
      continue;
    *v = (*v < 0 ? 0 : *v) + (double)(recs[k].end - recs[k].start) / 1e6;
  }
  free(recs);
  for (size_t i = 0; i < count; i++)
    missing += gpu[i] < 0;
  if (missing)
    return gpujit__error(GPUJIT_ECUDA, "CUPTI gave no timed record for %zu of %zu benchmark samples", missing, count);
  return 0;
}

/* Grow the sample arrays (CPU, then one per device) to hold `need`. */
static int grow_samples(double **cpu, double **gpu, size_t ndev, size_t *cap, size_t need)
{
  size_t c = *cap;
  for (size_t k = 0; k <= ndev; k++) {
    double **a = k ? &gpu[k - 1] : cpu, *p;
    c = *cap; /* the arrays share one capacity: each grows from it to the same size */
    if (!(p = gpujit__grow_to(*a, &c, need, sizeof(**a), 1024)))
      return GPUJIT_ENOMEM;
    *a = p;
  }
  *cap = c;
  return 0;
}

/* One benchmark in progress over one or more devices. */
typedef struct bench_run {
  gpujit_device *const *devs;
  size_t ndev;
  gpujit_bench_fn fn;
  void *payload;
  const gpujit_bench_options *o;
  bool cupti; /* one device timed by its activity records, not events */
  gpujit__timing *t[GPUJIT_BENCH_MAX_DEVICES];
  double *gpu[GPUJIT_BENCH_MAX_DEVICES], *cpu; /* the samples so far: n of cap */
  size_t n, cap, taken[GPUJIT_BENCH_MAX_DEVICES];
  CUevent ev[GPUJIT_BENCH_MAX_DEVICES][2 * GPUJIT__BENCH_BATCH]; /* taken[k] of them, per device */
} bench_run;

/* Each device's timing, its events (or CUPTI), the L2 flush buffer; then the warm-up. */
static int bench_setup(bench_run *b, gpujit_bench_result *out)
{
  gpujit_device *g = b->devs[0];
  int err;
  for (size_t k = 0; k < b->ndev; k++) {
    memset(&out[k], 0, sizeof(out[k]));
    if ((err = gpujit__timing_of(b->devs[k], &b->t[k])) < 0)
      return err;
  }
  b->cupti = b->t[0]->source != GPUJIT_TIMER_EVENTS;
  if (b->cupti && b->ndev > 1)
    return gpujit__error(GPUJIT_EINVAL, "a CUPTI timer source benchmarks one device; use events for %zu", b->ndev);
  /* a sample is whatever its function issues: tied by an id pushed around it, not per call */
  if (b->cupti && (err = gpujit__cupti_external(true)) < 0)
    return err;
  for (size_t k = 0; k < b->ndev && !b->cupti; k++) { /* CUPTI samples need no events */
    b->devs[k]->d->cuCtxSetCurrent(b->devs[k]->ctx);
    for (; b->taken[k] < 2 * GPUJIT__BENCH_BATCH; b->taken[k]++)
      if ((err = gpujit__timing_take_event(b->t[k], &b->ev[k][b->taken[k]])) < 0)
        return err;
  }
  if (b->o->l2_flush && !b->t[0]->flush_buf) {
    b->t[0]->flush_bytes = (size_t)(g->info.l2_bytes > 0 ? g->info.l2_bytes : 64 << 20) * 2;
    if ((err = gpujit_mem_alloc(&b->t[0]->flush_buf, g, b->t[0]->flush_bytes)) < 0)
      return err;
  }
  g->d->cuCtxSetCurrent(g->ctx);
  for (unsigned i = 0; i < b->o->warmup; i++)
    if ((err = b->fn(b->payload)) < 0)
      return err;
  for (size_t k = 0; k < b->ndev; k++)
    if ((err = gpujit_synchronize(b->devs[k])) < 0)
      return err;
  return 0;
}

/* An event recorded on every device's stream (none with CUPTI): sample i's start or end. */
static void record_all(bench_run *b, size_t slot)
{
  for (size_t k = 0; k < b->ndev && !b->cupti; k++) {
    b->devs[k]->d->cuCtxSetCurrent(b->devs[k]->ctx);
    b->devs[k]->d->cuEventRecord(b->ev[k][slot], b->devs[k]->stream);
  }
}

/* One batch of samples issued back to back, then their GPU times collected (one wait). */
static int bench_batch(bench_run *b, size_t batch)
{
  gpujit_device *g = b->devs[0];
  size_t n = b->n;
  int err;
  for (size_t i = 0; i < batch; i++) {
    double t0;
    if (b->o->l2_flush) /* overwrite L2 so the sample starts cold */
      g->d->cuMemsetD32Async((CUdeviceptr)b->t[0]->flush_buf, (unsigned)(n + i), b->t[0]->flush_bytes / 4, g->stream);
    if (b->cupti)
      gpujit__cupti_push(BENCH_IDS + n + i);
    record_all(b, 2 * i);
    g->d->cuCtxSetCurrent(g->ctx);
    t0 = gpujit__now_us();
    if ((err = b->fn(b->payload)) < 0)
      return err;
    b->cpu[n + i] = (gpujit__now_us() - t0) / 1e3;
    if (b->cupti)
      gpujit__cupti_pop();
    record_all(b, 2 * i + 1);
  }
  if (b->cupti)
    return (err = gpujit_synchronize(g)) < 0 ? err : cupti_samples(b->gpu[0] + n, BENCH_IDS + n, batch);
  for (size_t k = 0; k < b->ndev; k++) {
    gpujit_device *d = b->devs[k];
    if ((err = CU(d->d->cuEventSynchronize(b->ev[k][2 * batch - 1]), "benchmark sample")) < 0)
      return err;
    for (size_t i = 0; i < batch; i++) {
      float ms = 0;
      d->d->cuEventElapsedTime(&ms, b->ev[k][2 * i], b->ev[k][2 * i + 1]);
      b->gpu[k][n + i] = ms;
    }
  }
  return 0;
}

/* Each device's statistics; with samples_out, every sample: the CPU's, then each device's. */
static int bench_results(bench_run *b, gpujit_bench_result *out, double elapsed_s, double **samples_out)
{
  size_t n = b->n;
  for (size_t k = 0; k < b->ndev; k++) {
    out[k].stop = out[0].stop;
    out[k].elapsed_s = elapsed_s;
    gpujit_stats_compute(&out[k].gpu, b->gpu[k], n);
    gpujit_stats_compute(&out[k].cpu, b->cpu, n);
  }
  if (samples_out) {
    double *all = malloc((b->ndev + 1) * n * sizeof(*all));
    if (!all)
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    memcpy(all, b->cpu, n * sizeof(*all));
    for (size_t k = 0; k < b->ndev; k++)
      memcpy(all + (k + 1) * n, b->gpu[k], n * sizeof(*all));
    *samples_out = all;
  }
  return 0;
}

/* Close the kernel-regions windows of the samples: each module's table, its kernel time the
 * samples' total. */
static int close_windows(bench_run *b, gpujit__rwin *w[GPUJIT_BENCH_MAX_DEVICES])
{
  int err = 0;
  for (size_t k = 0; k < b->ndev; k++) {
    double total = 0;
    int e;
    if (!w[k])
      continue;
    for (size_t i = 0; i < b->n && b->gpu[k]; i++)
      total += b->gpu[k][i];
    if ((e = gpujit__rwatch_close(b->t[k], w[k], total)) < 0 && err == 0)
      err = e;
    w[k] = NULL;
  }
  return err;
}

/* The benchmark over one or more devices: events on each device's stream around every sample (or,
 * one device with a CUPTI source, the sample's activity records). */
static int bench(gpujit_bench_result *out, double **samples_out, gpujit_device *const *devs, size_t ndev,
                 gpujit_bench_fn fn, void *payload, const gpujit_bench_options *opts)
{
  gpujit_bench_options defaults = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit__rwin *window[GPUJIT_BENCH_MAX_DEVICES] = {0};
  bench_run b;
  double t_start;
  int err;

  if (!opts)
    opts = &defaults;
  if (opts->version != GPUJIT_BENCH_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "bench options version %u is not supported", opts->version);
  if (opts->max_samples < 1 || opts->min_samples > opts->max_samples)
    return gpujit__error(GPUJIT_EINVAL, "bench options: min_samples %u > max_samples %u", opts->min_samples,
                         opts->max_samples);
  memset(&b, 0, sizeof(b));
  b.devs = devs, b.ndev = ndev, b.fn = fn, b.payload = payload, b.o = opts;
  if ((err = bench_setup(&b, out)) < 0)
    goto done;
  for (size_t k = 0; k < ndev; k++) /* the samples are a window for kernel regions (not the warm-up) */
    if ((err = gpujit__rwatch_open(b.t[k], &window[k])) < 0)
      goto done;
  t_start = gpujit__now_us();
  for (bool stop = false; !stop;) {
    size_t batch = GPUJIT__BENCH_BATCH;
    if (b.n + batch > opts->max_samples)
      batch = opts->max_samples - b.n;
    if ((err = grow_samples(&b.cpu, b.gpu, ndev, &b.cap, b.n + batch)) < 0 || (err = bench_batch(&b, batch)) < 0)
      goto done;
    b.n += batch;
    stop = gpujit_bench_should_stop(b.gpu[0], b.n, (gpujit__now_us() - t_start) / 1e6, opts, &out[0].stop);
  }
  if ((err = close_windows(&b, window)) < 0)
    goto done;
  err = bench_results(&b, out, (gpujit__now_us() - t_start) / 1e6, samples_out);
done:
  close_windows(&b, window); /* after a failure: closed, the error kept */
  for (size_t k = 0; k < ndev; k++) {
    while (b.taken[k])
      gpujit__timing_give_event(b.t[k], b.ev[k][--b.taken[k]]);
    free(b.gpu[k]);
  }
  free(b.cpu);
  return err;
}

int gpujit_benchmark(gpujit_bench_result *out, double **samples_out, gpujit_device *g, gpujit_bench_fn fn,
                     void *payload, const gpujit_bench_options *opts)
{
  double *all = NULL;
  int err;
  if (samples_out)
    *samples_out = NULL;
  if (!out || !g || !fn)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_benchmark: NULL argument");
  if ((err = bench(out, samples_out ? &all : NULL, &g, 1, fn, payload, opts)) < 0)
    return err;
  if (samples_out) { /* the GPU samples only: they follow the CPU ones */
    memmove(all, all + out->gpu.n, out->gpu.n * sizeof(*all));
    *samples_out = all;
  }
  return 0;
}

int gpujit_benchmark_devices(gpujit_bench_result *out, double **samples_out, gpujit_device *const *devs,
                             size_t ndev, gpujit_bench_fn fn, void *payload, const gpujit_bench_options *opts)
{
  if (samples_out)
    *samples_out = NULL;
  if (!out || !devs || !fn || ndev == 0)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_benchmark_devices: NULL argument or no device");
  if (ndev > GPUJIT_BENCH_MAX_DEVICES)
    return gpujit__error(GPUJIT_EINVAL, "%zu devices to benchmark; at most %d", ndev, GPUJIT_BENCH_MAX_DEVICES);
  for (size_t k = 0; k < ndev; k++)
    for (size_t j = 0; j < k; j++)
      if (!devs[k] || devs[k] == devs[j])
        return gpujit__error(GPUJIT_EINVAL, "device %zu is NULL or given twice", k);
  return bench(out, samples_out, devs, ndev, fn, payload, opts);
}
