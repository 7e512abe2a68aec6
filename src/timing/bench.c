/* Host timers (synchronising, NVTX ranges) and benchmarks with a noise-based stopping rule. */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "timing/regions.h"

#define CU(call, what) gpujit__cuda_error((call), (what))

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
    err = gpujit_device_synchronize(t->dev);
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
  size_t c = *cap ? *cap : 1024;
  if (need <= *cap)
    return 0;
  while (c < need)
    c *= 2;
  for (size_t k = 0; k <= ndev; k++) {
    double **a = k ? &gpu[k - 1] : cpu, *p = realloc(*a, c * sizeof(**a));
    if (!p)
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    *a = p;
  }
  *cap = c;
  return 0;
}

/* The benchmark over one or more devices: events on each device's stream around every sample (or,
 * one device with a CUPTI source, the sample's activity records). */
static int bench(gpujit_bench_result *out, double **samples_out, gpujit_device *const *devs, size_t ndev,
                 gpujit_bench_fn fn, void *payload, const gpujit_bench_options *opts)
{
  gpujit_bench_options defaults = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit__timing *t[GPUJIT_BENCH_MAX_DEVICES] = {NULL};
  double *gpu[GPUJIT_BENCH_MAX_DEVICES] = {NULL}, *cpu = NULL, t_start = 0;
  size_t n = 0, cap = 0, taken[GPUJIT_BENCH_MAX_DEVICES] = {0};
  CUevent ev[GPUJIT_BENCH_MAX_DEVICES][2 * GPUJIT__BENCH_BATCH];
  gpujit_device *g;
  bool cupti;
  int err = 0;

  if (!opts)
    opts = &defaults;
  if (opts->version != GPUJIT_BENCH_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "bench options version %u is not supported", opts->version);
  if (opts->max_samples < 1 || opts->min_samples > opts->max_samples)
    return gpujit__error(GPUJIT_EINVAL, "bench options: min_samples %u > max_samples %u", opts->min_samples,
                         opts->max_samples);
  for (size_t k = 0; k < ndev; k++) {
    memset(&out[k], 0, sizeof(out[k]));
    if ((err = gpujit__timing_of(devs[k], &t[k])) < 0)
      return err;
  }
  g = devs[0];
  cupti = t[0]->source != GPUJIT_TIMER_EVENTS;
  if (cupti && ndev > 1)
    return gpujit__error(GPUJIT_EINVAL, "a CUPTI timer source benchmarks one device; use events for %zu", ndev);
  for (size_t k = 0; k < ndev && !cupti; k++) { /* CUPTI samples need no events */
    devs[k]->d->cuCtxSetCurrent(devs[k]->ctx);
    for (; taken[k] < 2 * GPUJIT__BENCH_BATCH; taken[k]++)
      if ((err = gpujit__timing_take_event(t[k], &ev[k][taken[k]])) < 0)
        goto done;
  }
  if (opts->l2_flush && !t[0]->flush_buf) {
    t[0]->flush_bytes = (size_t)(g->info.l2_bytes > 0 ? g->info.l2_bytes : 64 << 20) * 2;
    if ((err = gpujit_mem_alloc(&t[0]->flush_buf, g, t[0]->flush_bytes)) < 0)
      goto done;
  }
  g->d->cuCtxSetCurrent(g->ctx);
  for (unsigned i = 0; i < opts->warmup; i++)
    if ((err = fn(payload)) < 0)
      goto done;
  for (size_t k = 0; k < ndev; k++)
    if ((err = gpujit_synchronize(devs[k])) < 0)
      goto done;
  t_start = gpujit__now_us();
  for (bool stop = false; !stop;) {
    size_t batch = GPUJIT__BENCH_BATCH;
    if (n + batch > opts->max_samples)
      batch = opts->max_samples - n;
    if ((err = grow_samples(&cpu, gpu, ndev, &cap, n + batch)) < 0)
      goto done;
    for (size_t i = 0; i < batch; i++) {
      double t0;
      if (opts->l2_flush) /* overwrite L2 so the sample starts cold */
        g->d->cuMemsetD32Async((CUdeviceptr)t[0]->flush_buf, (unsigned)(n + i), t[0]->flush_bytes / 4, g->stream);
      if (cupti)
        gpujit__cupti_push(BENCH_IDS + n + i);
      for (size_t k = 0; k < ndev && !cupti; k++) {
        devs[k]->d->cuCtxSetCurrent(devs[k]->ctx);
        devs[k]->d->cuEventRecord(ev[k][2 * i], devs[k]->stream);
      }
      g->d->cuCtxSetCurrent(g->ctx);
      t0 = gpujit__now_us();
      if ((err = fn(payload)) < 0)
        goto done;
      cpu[n + i] = (gpujit__now_us() - t0) / 1e3;
      if (cupti)
        gpujit__cupti_pop();
      for (size_t k = 0; k < ndev && !cupti; k++) {
        devs[k]->d->cuCtxSetCurrent(devs[k]->ctx);
        devs[k]->d->cuEventRecord(ev[k][2 * i + 1], devs[k]->stream);
      }
    }
    if (cupti) {
      if ((err = gpujit_synchronize(g)) < 0 || (err = cupti_samples(gpu[0] + n, BENCH_IDS + n, batch)) < 0)
        goto done;
    }
    for (size_t k = 0; k < ndev && !cupti; k++) {
      if ((err = CU(devs[k]->d->cuEventSynchronize(ev[k][2 * batch - 1]), "benchmark sample")) < 0)
        goto done;
      for (size_t i = 0; i < batch; i++) {
        float ms = 0;
        devs[k]->d->cuEventElapsedTime(&ms, ev[k][2 * i], ev[k][2 * i + 1]);
        gpu[k][n + i] = ms;
      }
    }
    n += batch;
    stop = gpujit_bench_should_stop(gpu[0], n, (gpujit__now_us() - t_start) / 1e6, opts, &out[0].stop);
  }
  for (size_t k = 0; k < ndev; k++) {
    out[k].stop = out[0].stop;
    out[k].elapsed_s = (gpujit__now_us() - t_start) / 1e6;
    gpujit_stats_compute(&out[k].gpu, gpu[k], n);
    gpujit_stats_compute(&out[k].cpu, cpu, n);
  }
  if (samples_out) {
    double *all = malloc((ndev + 1) * n * sizeof(*all));
    if (!all) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      goto done;
    }
    memcpy(all, cpu, n * sizeof(*all));
    for (size_t k = 0; k < ndev; k++)
      memcpy(all + (k + 1) * n, gpu[k], n * sizeof(*all));
    *samples_out = all;
  }
done:
  for (size_t k = 0; k < ndev; k++) {
    while (taken[k])
      gpujit__timing_give_event(t[k], ev[k][--taken[k]]);
    free(gpu[k]);
  }
  free(cpu);
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
