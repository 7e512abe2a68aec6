/* A stage of the build pipeline: one trace span and its wall time. */
#include "base/clock.h"
#include "module/stage.h"

void gpujit__stage_begin(gpujit__stage *s, gpujit_trace *trace, const char *name)
{
  s->trace = trace;
  s->span = 0;
  if (trace)
    gpujit_trace_span_begin(trace, &s->span, "gpujit", name);
  s->t0 = gpujit__now_us();
}

void gpujit__stage_arg_str(gpujit__stage *s, const char *key, const char *value)
{
  if (s->trace && s->span)
    gpujit_trace_span_arg_str(s->trace, s->span, key, value ? value : "");
}

void gpujit__stage_arg_num(gpujit__stage *s, const char *key, double value)
{
  if (s->trace && s->span)
    gpujit_trace_span_arg_num(s->trace, s->span, key, value);
}

double gpujit__stage_end(gpujit__stage *s)
{
  double ms = (gpujit__now_us() - s->t0) / 1e3;
  if (s->trace && s->span)
    gpujit_trace_span_end(s->trace, s->span);
  s->span = 0;
  return ms;
}
