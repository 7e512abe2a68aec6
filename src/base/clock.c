/* The one clock every span, timing and benchmark reads. */
#define _GNU_SOURCE
#include <time.h>

#include "base/clock.h"

double gpujit__now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}
