/*
 * Many launches of an empty kernel through the driver API, as fast as the host issues them: where
 * a profiler's cost per launch shows most (bench/profile_overhead.py runs it side by side with and
 * without `gpujit profile`, and with ten million launches for its bounded-memory check). The
 * kernel is compiled with NVRTC for the device. Prints one JSON line: launches, seconds (the loop
 * and the synchronize after it), issue_seconds (the loop alone: the host's side; when it is close
 * to `seconds` the GPU kept up, or the host waited for room in the launch queue), and the
 * process's peak resident memory.
 * Usage: launch_storm [LAUNCHES]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "empty_kernel.h"

static long peak_kib(void)
{
  char line[256];
  long kib = -1;
  FILE *f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof(line), f))
    if (!strncmp(line, "VmHWM:", 6))
      kib = atol(line + 6);
  if (f)
    fclose(f);
  return kib;
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 10000000;
  CUfunction f = empty_kernel();
  int *none = NULL;
  void *args[] = {&none};
  struct timespec t0, t1, t2;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; i++)
    CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
  clock_gettime(CLOCK_MONOTONIC, &t2);
  CU(cuCtxSynchronize());
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("{\"launches\": %ld, \"seconds\": %.4f, \"issue_seconds\": %.4f, \"peak_kib\": %ld}\n", n,
         (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
         (double)(t2.tv_sec - t0.tv_sec) + (double)(t2.tv_nsec - t0.tv_nsec) / 1e9, peak_kib());
  return 0;
}
