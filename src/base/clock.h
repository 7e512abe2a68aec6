/* The one clock every span, timing and benchmark reads. */
#ifndef GPUJIT_BASE_CLOCK_H
#define GPUJIT_BASE_CLOCK_H

#include <stdint.h>

/** CLOCK_MONOTONIC in microseconds. */
double gpujit__now_us(void);
/** CLOCK_MONOTONIC in nanoseconds (the same clock, counted exactly). */
int64_t gpujit__now_ns(void);

#endif
