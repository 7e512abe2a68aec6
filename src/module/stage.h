/* A stage of the build pipeline: one trace span and its wall time, opened and closed here only,
 * so compile and cache code never trace themselves. */
#ifndef GPUJIT_MODULE_STAGE_H
#define GPUJIT_MODULE_STAGE_H

#include <stdint.h>

#include "gpujit/trace.h"

typedef struct gpujit__stage {
  gpujit_trace *trace; /* NULL: not traced, timed only */
  uint64_t span;
  double t0;
} gpujit__stage;

/** Start timing a stage; with a trace, open its span (category "gpujit"). */
void gpujit__stage_begin(gpujit__stage *s, gpujit_trace *trace, const char *name);
/** Attach an argument to the stage's span (nothing without a trace). */
void gpujit__stage_arg_str(gpujit__stage *s, const char *key, const char *value);
void gpujit__stage_arg_num(gpujit__stage *s, const char *key, double value);
/** Close the span. @return the stage's wall time in milliseconds. */
double gpujit__stage_end(gpujit__stage *s);

#endif
