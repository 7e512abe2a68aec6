/*
 * Host overhead per launch: gpujit_launch with timing inactive and with a timed region open (events
 * and CUPTI), against bare cuLaunchKernel loops on the same function and stream — plain, with the
 * events mechanism (a cuEventRecord pair around each launch), and with the CUPTI mechanism (its
 * kernel records on, an external correlation id pushed and popped around each launch). Each
 * variant issues batches of launches (synchronising between batches, outside the clock); rounds
 * interleave.
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

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
  const char *src = "extern \"C\" __global__ void empty(int n, float *p) { if (n < 0) p[0] = 0; }\n";
  gpujit_source s = {"empty.cu", src, strlen(src)};
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  int rounds = argc > 1 ? atoi(argv[1]) : 40;
  gpujit_device *dev;
  gpujit_module *m;
  gpujit_loaded *l;
  gpujit_kernel *k;
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  int n = 1;
  gpujit_devptr p = 0;
  void *args[] = {&n, &p};
  enum { NV = 6 };
  double *t[NV], start_ms;
  const char *names[NV] = {"raw cuLaunchKernel", "gpujit_launch, timing off", "gpujit_launch, timing on",
                           "raw + event pair", "raw + CUPTI (records, id)", "gpujit_launch, CUPTI timing"};
  CUevent ev[2 * BATCH];
  bool cupti;

  if (gpujit_device_open(&dev, -1) < 0) {
    printf("bench_run: skipped: %s\n", gpujit_error_last());
    return 0;
  }
  if (gpujit_module_build_sources(&m, &s, 1, &o) < 0 || gpujit_module_load(&l, dev, m) < 0 ||
      gpujit_kernel_get(&k, l, "empty") < 0) {
    fprintf(stderr, "%s\n", gpujit_error_last());
    return 1;
  }
  for (int i = 0; i < 2 * BATCH; i++)
    dev->d->cuEventCreate(&ev[i], CU_EVENT_DEFAULT);
  start_ms = gpujit__now_us();
  cupti = gpujit_timing_set_source(dev, GPUJIT_TIMER_CUPTI) == 0;
  start_ms = (gpujit__now_us() - start_ms) / 1e3;
  if (!cupti)
    printf("bench_run: CUPTI variants skipped: %s\n", gpujit_error_last());
  gpujit_timing_set_source(dev, GPUJIT_TIMER_EVENTS);
  for (int v = 0; v < NV; v++)
    t[v] = calloc((size_t)rounds, sizeof(double));
  for (int r = -2; r < rounds; r++) {
    for (int v = 0; v < NV; v++) {
      double t0, us;
      gpujit_timing_result *res = NULL;
      size_t nres;
      if (v >= 4 && !cupti)
        continue;
      gpujit_timing_set_source(dev, v >= 4 ? GPUJIT_TIMER_CUPTI : GPUJIT_TIMER_EVENTS);
      if (v == 2 || v == 5)
        gpujit_timing_begin(dev, GPUJIT_TIMING_KERNEL);
      t0 = gpujit__now_us();
      for (int i = 0; i < BATCH; i++) {
        if (v == 0) {
          dev->d->cuLaunchKernel(k->fn, 1, 1, 1, 32, 1, 1, 0, dev->stream, args, NULL);
        } else if (v == 3) {
          dev->d->cuEventRecord(ev[2 * i], dev->stream);
          dev->d->cuLaunchKernel(k->fn, 1, 1, 1, 32, 1, 1, 0, dev->stream, args, NULL);
          dev->d->cuEventRecord(ev[2 * i + 1], dev->stream);
        } else if (v == 4) {
          gpujit__cupti_push((uint64_t)i + 1u);
          dev->d->cuLaunchKernel(k->fn, 1, 1, 1, 32, 1, 1, 0, dev->stream, args, NULL);
          gpujit__cupti_pop();
        } else {
          gpujit_launch(k, grid, block, 0, args);
        }
      }
      us = (gpujit__now_us() - t0) / BATCH;
      if (v == 2 || v == 5) {
        gpujit_timing_end(&res, &nres, dev);
        if (nres != BATCH)
          fprintf(stderr, "expected %d timed launches, got %zu\n", BATCH, nres);
        gpujit_free(res);
      }
      gpujit_synchronize(dev);
      if (v == 4) { /* the bare loop's records are not gpujit's: taken and dropped */
        gpujit__cupti_rec *recs = NULL;
        size_t nrecs = 0;
        gpujit__cupti_take(&recs, &nrecs, 0, UINT64_MAX, NULL);
        free(recs);
      }
      if (r >= 0)
        t[v][r] = us;
    }
  }
  gpujit_timing_set_source(dev, GPUJIT_TIMER_EVENTS);
  printf("host time per launch, empty kernel, batches of %d, %d rounds (median µs)\n", BATCH, rounds);
  {
    double med[NV];
    for (int v = 0; v < NV; v++) {
      if (v >= 4 && !cupti)
        continue;
      qsort(t[v], (size_t)rounds, sizeof(double), cmp_double);
      med[v] = t[v][rounds / 2];
      printf("  %-28s %8.3f µs   (min %.3f)\n", names[v], med[v], t[v][0]);
    }
    printf("  added by gpujit, timing off  %8.3f µs   (target <= 0.3)\n", med[1] - med[0]);
    printf("  added by gpujit, timing on   %8.3f µs\n", med[2] - med[0]);
    printf("  events: gpujit over raw      %8.3f µs   (target <= 0.3)\n", med[2] - med[3]);
    if (cupti) {
      printf("  cupti: gpujit over raw       %8.3f µs   (target <= 0.3)\n", med[5] - med[4]);
      printf("  cupti: first start           %8.3f ms   (loading libcupti, enabling its records)\n", start_ms);
    }
  }
  for (int i = 0; i < 2 * BATCH; i++)
    dev->d->cuEventDestroy(ev[i]);
  gpujit_loaded_free(l);
  gpujit_module_free(m);
  gpujit_device_free(dev);
  return 0;
}
