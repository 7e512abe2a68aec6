/*
 * What CUPTI itself costs a launch, with nothing done with its records: the floor under any
 * profiler that records every kernel through CUPTI's activity API (bench/profile_overhead.py
 * measures gpujit profile against a plain run; this measures what is left when gpujit's own work
 * is taken away). One process, one empty kernel launched through the driver API in segments of
 * LAUNCHES, each segment under one setting, the settings rotated each round (so none always runs
 * first); between segments CUPTI is flushed and set up for the next, untimed. Buffers of 4 MiB,
 * given back unread (their records counted), delivered every 100 ms, as the profile's. Settings:
 *   plain        no CUPTI activity, no callbacks
 *   callback     a CUPTI launch callback that does nothing (what tying launches costs at least)
 *   kernel       CONCURRENT_KERNEL records
 *   kernel+jit   and the driver's JIT records
 *   kernel+nvtx  and NVTX ranges (CUPTI_ACTIVITY_KIND_MARKER)
 *   kernel+copy  and copies and memsets
 *   profile      the profile's set: those five kinds, the launch callback and the module-load
 *                callbacks
 * With "early", the profile's set is enabled before cuInit (as CUDA_INJECTION64_PATH does) and
 * each segment then turns off what its setting has not. Whether CUPTI attached at all costs every
 * launch, settings or none, shows across processes: "none" runs plain segments with CUPTI never
 * called; "nosub" never subscribes to callbacks (plain and kernel only); "sub" (the default)
 * subscribes before cuInit; "noflush" is nosub without cuptiActivityFlushPeriod; "late" is nosub
 * with CUPTI first called once the context and module are made.
 * Prints a line per setting: median us a launch [min-max], the median of its ratios to the plain
 * segment of the same round; then one JSON line.
 * Usage: cupti_floor [LAUNCHES] [ROUNDS] [sub|early|nosub|noflush|late|none]
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "empty_kernel.h"

#define CP(x)                                                                                                          \
  do {                                                                                                                 \
    CUptiResult r_ = (x);                                                                                              \
    if (r_ != CUPTI_SUCCESS) {                                                                                         \
      const char *s_ = NULL;                                                                                           \
      cuptiGetResultString(r_, &s_);                                                                                   \
      fprintf(stderr, "cupti_floor: %s: %s\n", #x, s_ ? s_ : "?");                                                     \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

enum { K = 1, J = 2, M = 4, C = 8, CB = 16, LOADS = 32 };
enum { PLAIN, CALLBACK, KERNEL, KERNEL_JIT, KERNEL_NVTX, KERNEL_COPY, PROFILE, SETTINGS };
static const char *names[SETTINGS] = {"plain", "callback", "kernel", "kernel+jit", "kernel+nvtx", "kernel+copy", "profile"};
static const int parts[SETTINGS] = {0, CB, K, K | J, K | M, K | C, K | J | M | C | CB | LOADS};
static const size_t buffer_bytes = 4u << 20;
static unsigned long long records, requests;

static void CUPTIAPI request(uint8_t **buffer, size_t *size, size_t *max_records)
{
  *buffer = calloc(1, buffer_bytes);
  *size = *buffer ? buffer_bytes : 0;
  *max_records = 0;
  requests++;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
  CUpti_Activity *a = NULL;
  (void)ctx, (void)stream, (void)size;
  while (valid && cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS)
    __atomic_add_fetch(&records, 1, __ATOMIC_RELAXED);
  free(buffer);
}

static void CUPTIAPI on_api(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
  (void)ud, (void)d, (void)id, (void)data;
}

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The median of v[0..n), v left as it was. */
static double median(const double *v, int n)
{
  double s[256];
  memcpy(s, v, sizeof(double) * (size_t)n);
  return bench_median(s, n);
}

static CUpti_SubscriberHandle sub;
static int subscribed;

static void kind(int on, CUpti_ActivityKind k)
{
  if (on)
    CP(cuptiActivityEnable(k));
  else
    CP(cuptiActivityDisable(k));
}

static void set_up(int s)
{
  static const CUpti_CallbackId loads[] = {CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData, CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx,
                                           CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData, CUPTI_DRIVER_TRACE_CBID_cuModuleUnload};
  int p = parts[s];
  for (size_t i = 0; subscribed && i < sizeof(loads) / sizeof(loads[0]); i++)
    CP(cuptiEnableCallback((p & LOADS) != 0, sub, CUPTI_CB_DOMAIN_DRIVER_API, loads[i]));
  if (subscribed)
    CP(cuptiEnableCallback((p & CB) != 0, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  kind(p & K, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  kind(p & J, CUPTI_ACTIVITY_KIND_JIT);
  kind(p & M, CUPTI_ACTIVITY_KIND_MARKER);
  kind(p & C, CUPTI_ACTIVITY_KIND_MEMCPY);
  kind(p & C, CUPTI_ACTIVITY_KIND_MEMSET);
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 500000;
  int rounds = argc > 2 ? atoi(argv[2]) : 7;
  const char *how = argc > 3 ? argv[3] : "sub";
  CUfunction f;
  int *none = NULL;
  void *args[] = {&none};
  static double us[SETTINGS][256], ratio[SETTINGS][256];
  if (rounds < 1 || rounds > 256 || n < 1000) {
    fprintf(stderr, "usage: cupti_floor [LAUNCHES >= 1000] [ROUNDS 1-256]\n");
    return 2;
  }
  if (strcmp(how, "sub") && strcmp(how, "early") && strcmp(how, "nosub") && strcmp(how, "noflush") && strcmp(how, "late") &&
      strcmp(how, "none")) {
    fprintf(stderr, "cupti_floor: '%s' is not one of sub, early, nosub, noflush, late, none\n", how);
    return 2;
  }
  subscribed = !strcmp(how, "sub") || !strcmp(how, "early");
  if (subscribed)
    CP(cuptiSubscribe(&sub, on_api, NULL));
  if (strcmp(how, "none") && strcmp(how, "late"))
    CP(cuptiActivityRegisterCallbacks(request, completed));
  if (strcmp(how, "none") && strcmp(how, "late") && strcmp(how, "noflush"))
    CP(cuptiActivityFlushPeriod(100));
  if (!strcmp(how, "early"))
    set_up(PROFILE);
  f = empty_kernel();
  if (!strcmp(how, "late")) {
    CP(cuptiActivityRegisterCallbacks(request, completed));
    CP(cuptiActivityFlushPeriod(100));
  }
  for (long i = 0; i < 20000; i++) /* warm */
    CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
  CU(cuCtxSynchronize());
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < SETTINGS; k++) {
      int s = (r + k) % SETTINGS;
      double t0, t1;
      if (s != PLAIN && (!strcmp(how, "none") || (!subscribed && s != KERNEL)))
        continue;
      if (strcmp(how, "none"))
        set_up(s);
      CU(cuCtxSynchronize());
      t0 = now();
      for (long i = 0; i < n; i++)
        CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
      CU(cuCtxSynchronize());
      t1 = now();
      us[s][r] = (t1 - t0) / (double)n * 1e6;
      if (strcmp(how, "none")) {
        set_up(PLAIN);
        CP(cuptiActivityFlushAll(1));
      }
    }
  printf("cupti_floor (%s): %ld launches a segment, %d rounds, medians [min-max]; %llu records read, %llu buffers\n", how,
         n, rounds, records, requests);
  printf("  %-11s %-26s %s\n", "setting", "us a launch", "ratio to plain (same round)");
  for (int s = 0; s < SETTINGS; s++) {
    if (us[s][0] == 0)
      continue;
    double lo = us[s][0], hi = us[s][0];
    for (int r = 0; r < rounds; r++) {
      ratio[s][r] = us[s][r] / us[PLAIN][r];
      lo = us[s][r] < lo ? us[s][r] : lo;
      hi = us[s][r] > hi ? us[s][r] : hi;
    }
    printf("  %-11s %.3f [%.3f-%.3f]   %.3fx (%+.3f us)\n", names[s], median(us[s], rounds), lo, hi,
           median(ratio[s], rounds), median(us[s], rounds) - median(us[PLAIN], rounds));
  }
  printf("{\"launches\": %ld, \"rounds\": %d", n, rounds);
  for (int s = 0; s < SETTINGS; s++)
    if (us[s][0] != 0)
      printf(", \"%s\": [%.4f, %.4f]", names[s], median(us[s], rounds), median(ratio[s], rounds));
  printf("}\n");
  return 0;
}
