/*
 * A loop of steps, as a simulation or training loop is: each step launches L empty kernels
 * through the driver API, synchronizes (as `ti.sync()` before `profiler.step()`), and marks its
 * end with gpujit_profile_step() — a no-op outside a profile. What `gpujit profile --schedule`
 * costs the steps it does not record shows here: bench/step_overhead.py runs it plain and
 * profiled, alternated. Prints one JSON line: steps, launches a step, seconds (the whole loop),
 * and each step's own wall time in microseconds (the program's own measure, which a profile's
 * step wall times are checked against).
 * Usage: step_storm [STEPS [LAUNCHES_A_STEP]]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "empty_kernel.h"
#include "gpujit/profile.h"

static double now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t); /* the clock a profile's host times are on */
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
  long steps = argc > 1 ? atol(argv[1]) : 1000, per = argc > 2 ? atol(argv[2]) : 1000;
  CUfunction f = empty_kernel();
  int *none = NULL;
  void *args[] = {&none};
  double *wall = calloc((size_t)(steps > 0 ? steps : 1), sizeof(*wall)), t0 = now_us(), ts = t0;
  if (steps < 1 || per < 1 || !wall) {
    fprintf(stderr, "usage: step_storm [STEPS >= 1 [LAUNCHES_A_STEP >= 1]]\n");
    return 2;
  }
  for (long s = 0; s < steps; s++) {
    for (long i = 0; i < per; i++)
      CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CU(cuCtxSynchronize());
    gpujit_profile_step();
    {
      double t = now_us();
      wall[s] = t - ts;
      ts = t;
    }
  }
  printf("{\"steps\": %ld, \"launches_a_step\": %ld, \"seconds\": %.4f, \"step_us\": [", steps, per,
         (ts - t0) / 1e6);
  for (long s = 0; s < steps; s++)
    printf("%s%.1f", s ? ", " : "", wall[s]);
  printf("]}\n");
  free(wall);
  return 0;
}
