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

int gpujit_benchmark(gpujit_bench_result *out, double **samples_out, gpujit_device *g, gpujit_bench_fn fn,
                     void *payload, const gpujit_bench_options *opts)
{
  gpujit_bench_options defaults = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit__timing *t = NULL;
  double *gpu = NULL, *cpu = NULL, t_start;
  size_t n = 0, cap = 0, taken = 0;
  CUevent ev[2 * GPUJIT__BENCH_BATCH];
  bool cupti;
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
  if ((err = gpujit__timing_of(g, &t)) < 0)
    return err;
  cupti = t->source != GPUJIT_TIMER_EVENTS;
  g->d->cuCtxSetCurrent(g->ctx);
  for (; !cupti && taken < 2 * GPUJIT__BENCH_BATCH; taken++) /* CUPTI samples need no events */
    if ((err = gpujit__timing_take_event(t, &ev[taken])) < 0)
      goto done;
  if (opts->l2_flush && !t->flush_buf) {
    t->flush_bytes = (size_t)(g->info.l2_bytes > 0 ? g->info.l2_bytes : 64 << 20) * 2;
    if ((err = gpujit_mem_alloc(&t->flush_buf, g, t->flush_bytes)) < 0)
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
        g->d->cuMemsetD32Async((CUdeviceptr)t->flush_buf, (unsigned)(n + i), t->flush_bytes / 4, g->stream);
      if (cupti)
        gpujit__cupti_push(BENCH_IDS + n + i);
      else
        g->d->cuEventRecord(ev[2 * i], g->stream);
      t0 = gpujit__now_us();
      if ((err = fn(payload)) < 0)
        goto done;
      cpu[n + i] = (gpujit__now_us() - t0) / 1e3;
      if (cupti)
        gpujit__cupti_pop();
      else
        g->d->cuEventRecord(ev[2 * i + 1], g->stream);
    }
    if (cupti) {
      if ((err = gpujit_synchronize(g)) < 0 || (err = cupti_samples(gpu + n, BENCH_IDS + n, batch)) < 0)
        goto done;
    } else {
      if ((err = CU(g->d->cuEventSynchronize(ev[2 * batch - 1]), "benchmark sample")) < 0)
        goto done;
      for (size_t i = 0; i < batch; i++) {
        float ms = 0;
        g->d->cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
        gpu[n + i] = ms;
      }
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
    gpujit__timing_give_event(t, ev[--taken]);
  free(gpu);
  free(cpu);
  return err;
}
