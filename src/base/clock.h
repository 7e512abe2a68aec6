/* The one clock every span, timing and benchmark reads. */
#ifndef GPUJIT_BASE_CLOCK_H
#define GPUJIT_BASE_CLOCK_H

/** CLOCK_MONOTONIC in microseconds. */
double gpujit__now_us(void);

#endif
