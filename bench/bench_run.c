/*
 * Host time a timed launch adds, side by side with the raw driver API doing the same timing: one
 * empty kernel, launched in batches of BATCH on the device's stream (the stream synchronised
 * between batches, outside the clock), every variant of a group once a round, the order rotated
 * each round. The events group runs first, in a process CUPTI has not attached to yet (as a
 * program timing with events runs); then the CUPTI group, CUPTI set up before each variant.
 *
 *   events group (timer source events)                 CUPTI group (timer source cupti)
 *   raw cuLaunchKernel                                 raw + CUPTI records (no callback, no ids)
 *   gpujit_launch, timing off                          raw + CUPTI launch callback
 *   raw + event pair (cuEventRecord around each)       raw + CUPTI (records, id): an id pushed/popped
 *   gpujit_launch, timing on (events)                  gpujit_launch, CUPTI timing (its default ties)
 *   raw + context + clock (what gpujit's path keeps:   gpujit_launch, CUPTI, ids (the ties used where
 *     cuCtxSetCurrent and two clock reads)               another tool holds CUPTI's subscriber: no
 *                                                        watch of the context, so it is set each launch)
 *                                                      and, to show where the CUPTI timer's time goes,
 *                                                      each with the launch callback on as gpujit's:
 *                                                      raw + callback + cuCtxSetCurrent
 *                                                      raw + callback + cuCtxGetCurrent (a query instead)
 *                                                      raw + callback + two clock reads
 *                                                      gpujit_launch, CUPTI, context set each launch
 *                                                        (the path before the context watch)
 *
 * The targets compare each round's pair (gpujit against the raw variant with the same mechanism)
 * and report the median and spread of those differences:
 *   events: gpujit_launch timed by events - raw + event pair            (target <= 0.3 µs)
 *   cupti:  gpujit_launch timed by CUPTI - raw + CUPTI records           (target <= 0.3 µs)
 * RESULT cupti_part_us lines give those parts the same way, each against raw + callback (and
 * the context watch's saving: gpujit setting the context each launch against not).
 * CHECK lines say every timed launch got its own GPU time. Usage: bench_run [ROUNDS]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpujit.h"
#include "base/clock.h"
#include "run/device.h"
#include "timing/cupti.h"

#define BATCH 256
#define RAW_IDS ((uint64_t)1 << 61) /* the bare loop's pushed ids: far from the timer's */

enum {
  RAW, OFF, EVPAIR, EVENTS, FIXED,       /* events group */
  C_RAW, C_CB, C_ID, C_GJ, C_GJ_ID,      /* CUPTI group */
  C_CB_SET, C_CB_GET, C_CB_CLOCK, C_GJ_SET, /* CUPTI group: the parts of gpujit's path, callback on */
  NV
};
static const char *names[NV] = {"raw cuLaunchKernel",        "gpujit_launch, timing off",  "raw + event pair",
                                "gpujit_launch, timing on",  "raw + context + clock",      "raw + CUPTI records",
                                "raw + CUPTI launch callback", "raw + CUPTI (records, id)", "gpujit_launch, CUPTI timing",
                                "gpujit_launch, CUPTI, ids", "raw + callback + context set",
                                "raw + callback + context get", "raw + callback + clock",
                                "gpujit_launch, CUPTI, set each"};

typedef struct bench {
  gpujit_device *dev;
  gpujit_kernel *k;
  void **args;
  CUevent ev[2 * BATCH];
  bool cupti, callback, watch; /* watch: run's context watch came on with gpujit's subscriber */
  size_t timed[NV], missing[NV];
} bench;

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* q-quantile of v[0..n), v left as it was (its rounds stay paired with the other variants'). */
static double quantile(const double *v, int n, double q)
{
  double *c = malloc((size_t)n * sizeof(*c)), x;
  memcpy(c, v, (size_t)n * sizeof(*c));
  qsort(c, (size_t)n, sizeof(*c), cmp_double);
  x = c[(int)(q * (n - 1) + 0.5)];
  free(c);
  return x;
}

/* Variants that need the launch callback (skipped where another holds CUPTI's subscriber). */
static bool needs_callback(int v) { return v == C_CB || v == C_CB_SET || v == C_CB_GET || v == C_CB_CLOCK; }

/* CUPTI set up as variant v needs: launch callbacks, external ids, run's watch of the current
 * context (on with gpujit's subscriber; off where the ties are ids, as where another holds it,
 * and for the path before the watch). */
static void cupti_state(bench *b, int v)
{
  bool gj = v == C_GJ || v == C_GJ_SET;
  bool cb = needs_callback(v) || gj, ids = v == C_ID || v == C_GJ_ID || (gj && !b->callback);
  gpujit__cupti_callbacks(cb);
  gpujit__cupti_external(ids);
  gpujit__ctx_watch(b->watch && v != C_GJ_ID && v != C_GJ_SET);
}

/* The bare loops' records are nobody's: taken and dropped. */
static void drop_records(void)
{
  gpujit__cupti_rec *recs = NULL;
  size_t n = 0;
  gpujit__cupti_take(&recs, &n, RAW_IDS, UINT64_MAX, NULL);
  free(recs);
}

/* One batch of variant v; the host µs per launch. */
static double batch(bench *b, int v)
{
  gpujit_device *g = b->dev;
  const gpujit__driver *d = g->d;
  CUfunction fn = b->k->fn;
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  bool timed = v == EVENTS || v == C_GJ || v == C_GJ_ID || v == C_GJ_SET;
  double t0, us;
  volatile double sink = 0; /* the clock reads gpujit's path makes, made here too */
  if (v >= C_RAW)
    cupti_state(b, v);
  if (timed)
    gpujit_timing_begin(g, GPUJIT_TIMING_KERNEL);
  t0 = gpujit__now_us();
  for (int i = 0; i < BATCH; i++) {
    switch (v) {
    case RAW: case C_RAW: case C_CB:
      d->cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, g->stream, b->args, NULL);
      break;
    case C_CB_SET:
      d->cuCtxSetCurrent(g->ctx);
      d->cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, g->stream, b->args, NULL);
      break;
    case C_CB_GET: {
      CUcontext cur = NULL;
      d->cuCtxGetCurrent(&cur);
      sink += cur == g->ctx;
      d->cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, g->stream, b->args, NULL);
      break;
    }
    case C_CB_CLOCK: {
      double a = gpujit__now_us();
      d->cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, g->stream, b->args, NULL);
      sink += gpujit__now_us() - a;
      break;
    }
    case EVPAIR:
      d->cuEventRecord(b->ev[2 * i], g->stream);
      d->cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, g->stream, b->args, NULL);
      d->cuEventRecord(b->ev[2 * i + 1], g->stream);
      break;
    case FIXED: {
      double a;
      d->cuCtxSetCurrent(g->ctx);
      a = gpujit__now_us();
      d->cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, g->stream, b->args, NULL);
      sink += gpujit__now_us() - a;
      break;
    }
    case C_ID:
      gpujit__cupti_push(RAW_IDS + (uint64_t)i);
      d->cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, g->stream, b->args, NULL);
      gpujit__cupti_pop();
      break;
    default:
      gpujit_launch(b->k, grid, block, 0, b->args);
    }
  }
  us = (gpujit__now_us() - t0) / BATCH;
  if (timed) {
    gpujit_timing_result *res = NULL;
    size_t n = 0;
    gpujit_timing_end(&res, &n, g);
    b->timed[v] += BATCH;
    for (size_t i = 0; i < BATCH; i++)
      b->missing[v] += i >= n || res[i].missing || !(res[i].elapsed_ms > 0);
    gpujit_free(res);
  }
  gpujit_synchronize(g);
  if (v >= C_RAW)
    drop_records();
  return us;
}

/* Every variant of one group once, starting at `first` (the order rotates round by round). */
static void group(bench *b, int lo, int hi, int first, double **t, int r)
{
  for (int j = 0; j < hi - lo; j++) {
    int v = lo + (first + j) % (hi - lo);
    double us;
    if (needs_callback(v) && !b->callback)
      continue;
    us = batch(b, v);
    if (r >= 0)
      t[v][r] = us;
  }
}

/* Each round's variant `gj` minus variant `raw`: median and spread, against a target where one is
 * given (target < 0: none). */
static void diff_line(const char *result, const char *what, double **t, int gj, int raw, int rounds, double goal)
{
  double *d = malloc((size_t)rounds * sizeof(*d)), med, p25, p75, lo, hi;
  for (int r = 0; r < rounds; r++)
    d[r] = t[gj][r] - t[raw][r];
  med = quantile(d, rounds, 0.5);
  p25 = quantile(d, rounds, 0.25);
  p75 = quantile(d, rounds, 0.75);
  lo = quantile(d, rounds, 0);
  hi = quantile(d, rounds, 1);
  printf("RESULT %s %s median=%.3f p25=%.3f p75=%.3f min=%.3f max=%.3f rounds=%d", result, what, med, p25, p75, lo,
         hi, rounds);
  if (goal >= 0)
    printf(" target=%.1f %s", goal, med <= goal ? "met" : "NOT-met");
  printf("\n");
  free(d);
}

/* One target: each round's gpujit variant minus its raw one; median and spread, met or not. */
static void target(const char *what, double **t, int gj, int raw, int rounds)
{
  diff_line("timer_over_raw_us", what, t, gj, raw, rounds, 0.3);
}

static void check(const bench *b, const char *what, int v)
{
  printf("CHECK every_timed_launch_timed %s %zu/%zu %s\n", what, b->timed[v] - b->missing[v], b->timed[v],
         b->timed[v] && !b->missing[v] ? "PASS" : "FAIL");
}

int main(int argc, char **argv)
{
  const char *src = "extern \"C\" __global__ void empty(int n, float *p) { if (n < 0) p[0] = 0; }\n";
  gpujit_source s = {"empty.cu", src, strlen(src)};
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  int rounds = argc > 1 ? atoi(argv[1]) : 40;
  gpujit_module *m;
  gpujit_loaded *l;
  int n = 1;
  gpujit_devptr p = 0;
  void *args[] = {&n, &p};
  double *t[NV], med[NV], start_ms;
  bench b;

  memset(&b, 0, sizeof(b));
  b.args = args;
  if (rounds < 4 || rounds > 100000) {
    fprintf(stderr, "usage: bench_run [ROUNDS >= 4]\n");
    return 2;
  }
  if (gpujit_device_open(&b.dev, -1) < 0) {
    printf("bench_run: skipped: %s\n", gpujit_error_last());
    return 0;
  }
  if (gpujit_module_build_sources(&m, &s, 1, &o) < 0 || gpujit_module_load(&l, b.dev, m) < 0 ||
      gpujit_kernel_get(&b.k, l, "empty") < 0) {
    fprintf(stderr, "%s\n", gpujit_error_last());
    return 1;
  }
  for (int i = 0; i < 2 * BATCH; i++)
    b.dev->d->cuEventCreate(&b.ev[i], CU_EVENT_DEFAULT);
  for (int v = 0; v < NV; v++)
    t[v] = calloc((size_t)rounds, sizeof(double));
  /* The events group first, CUPTI not yet loaded: once attached, CUPTI costs every driver call of
   * the process (whatever is enabled), which a program timing with events never pays. */
  for (int r = -2; r < rounds; r++) /* two rounds of warm-up */
    group(&b, RAW, C_RAW, (r + 2) % (C_RAW - RAW), t, r);
  start_ms = gpujit__now_us();
  b.cupti = gpujit_timing_set_source(b.dev, GPUJIT_TIMER_CUPTI) == 0;
  start_ms = (gpujit__now_us() - start_ms) / 1e3;
  if (!b.cupti)
    printf("bench_run: CUPTI variants skipped: %s\n", gpujit_error_last());
  b.callback = b.cupti && gpujit__cupti_by_callback();
  b.watch = b.callback && __atomic_load_n(&gpujit__ctx_watching, __ATOMIC_ACQUIRE) != 0;
  if (b.callback && !b.watch)
    printf("bench_run: CUPTI refused a context call's callback: gpujit sets the context at each launch\n");
  if (b.cupti && !b.callback)
    printf("bench_run: CUPTI's subscriber is another's (%s): gpujit ties by ids; the callback variant skipped\n",
           gpujit__cupti_no_callback_why());
  for (int r = -2; r < rounds && b.cupti; r++)
    group(&b, C_RAW, NV, (r + 2) % (NV - C_RAW), t, r);
  gpujit_timing_set_source(b.dev, GPUJIT_TIMER_EVENTS);
  printf("host time per launch, empty kernel, batches of %d, %d rounds, variants rotated (median µs)\n", BATCH,
         rounds);
  for (int v = 0; v < NV; v++) {
    if ((v >= C_RAW && !b.cupti) || (needs_callback(v) && !b.callback))
      continue;
    med[v] = quantile(t[v], rounds, 0.5);
    printf("  %-30s %8.3f µs   (p10 %.3f, p90 %.3f)\n", names[v], med[v], quantile(t[v], rounds, 0.1),
           quantile(t[v], rounds, 0.9));
  }
  printf("  added by gpujit, timing off    %8.3f µs   (target <= 0.3)\n", med[OFF] - med[RAW]);
  printf("  added by gpujit, timing on     %8.3f µs\n", med[EVENTS] - med[RAW]);
  printf("  events: gpujit over raw        %8.3f µs   (target <= 0.3)\n", med[EVENTS] - med[EVPAIR]);
  printf("  context + clock over raw       %8.3f µs   (what gpujit's launch path keeps)\n", med[FIXED] - med[RAW]);
  if (b.cupti) {
    printf("  cupti: gpujit over raw         %8.3f µs   (target <= 0.3; raw: CUPTI's records alone)\n",
           med[C_GJ] - med[C_RAW]);
    if (b.callback)
      printf("  cupti: launch callback         %8.3f µs   (CUPTI calling gpujit at each launch)\n",
             med[C_CB] - med[C_RAW]);
    printf("  cupti: ids pushed/popped       %8.3f µs   (with the driver-API records they need)\n",
           med[C_ID] - med[C_RAW]);
    printf("  cupti, ids: gpujit over raw    %8.3f µs   (raw: records and an id pushed/popped)\n",
           med[C_GJ_ID] - med[C_ID]);
    if (b.callback) {
      printf("  cupti: gpujit over callback    %8.3f µs   (raw: records and the launch callback)\n",
             med[C_GJ] - med[C_CB]);
      printf("  cupti: context set             %8.3f µs   (cuCtxSetCurrent under CUPTI; the watch skips it)\n",
             med[C_CB_SET] - med[C_CB]);
      printf("  cupti: context get             %8.3f µs   (cuCtxGetCurrent under CUPTI)\n", med[C_CB_GET] - med[C_CB]);
      printf("  cupti: two clock reads         %8.3f µs\n", med[C_CB_CLOCK] - med[C_CB]);
      printf("  cupti: set each launch         %8.3f µs   (gpujit's path before the watch, over raw)\n",
             med[C_GJ_SET] - med[C_RAW]);
    }
    printf("  cupti: first start             %8.3f ms   (loading libcupti, enabling its records)\n", start_ms);
  }
  target("events", t, EVENTS, EVPAIR, rounds);
  check(&b, "events", EVENTS);
  if (b.cupti) {
    target(b.callback ? "cupti" : "cupti(ids)", t, C_GJ, C_RAW, rounds);
    target("cupti_ids_vs_raw_ids", t, C_GJ_ID, C_ID, rounds);
    printf("CHECK cupti_ties_by_callback %s\n", b.callback ? "PASS" : "FAIL (another holds CUPTI's subscriber)");
    check(&b, b.callback ? "cupti" : "cupti(ids)", C_GJ);
    check(&b, "cupti_ids", C_GJ_ID);
    if (b.callback) {
      diff_line("cupti_part_us", "gpujit_over_callback", t, C_GJ, C_CB, rounds, -1);
      diff_line("cupti_part_us", "context_set", t, C_CB_SET, C_CB, rounds, -1);
      diff_line("cupti_part_us", "context_get", t, C_CB_GET, C_CB, rounds, -1);
      diff_line("cupti_part_us", "two_clock_reads", t, C_CB_CLOCK, C_CB, rounds, -1);
      diff_line("cupti_part_us", "set_each_launch_over_raw", t, C_GJ_SET, C_RAW, rounds, -1);
      diff_line("cupti_part_us", "saved_by_watch", t, C_GJ_SET, C_GJ, rounds, -1);
      check(&b, "cupti_set_each", C_GJ_SET);
    }
  } else {
    printf("RESULT timer_over_raw_us cupti skipped (no CUPTI)\n");
  }
  for (int v = 0; v < NV; v++)
    free(t[v]);
  for (int i = 0; i < 2 * BATCH; i++)
    b.dev->d->cuEventDestroy(b.ev[i]);
  gpujit_loaded_free(l);
  gpujit_module_free(m);
  gpujit_device_free(b.dev);
  return 0;
}
