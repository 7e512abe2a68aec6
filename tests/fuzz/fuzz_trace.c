/* Fuzz target: trace analysis and comparison (Trace Event Format, raw NVRTC traces, gpujit
 * traces with recorded compile profiles), as `trace analyze` and `trace diff` read them. */
#include "fuzz.h"

static void walk(const gpujit_trace_analysis *a)
{
  for (int t = 0; t < GPUJIT_TRACE_TABLE_COUNT; t++)
    for (size_t i = 0; i < gpujit_trace_analysis_count(a, (gpujit_trace_table)t); i++)
      if (!gpujit_trace_analysis_row(a, (gpujit_trace_table)t, i)->name)
        abort();
}

static void compare(const gpujit_trace_analysis *a, const gpujit_trace_analysis *b)
{
  gpujit_trace_diff_options o = GPUJIT_TRACE_DIFF_OPTIONS_INIT;
  gpujit_trace_diff *d = NULL;
  gpujit_trace_diff_verdict v;
  o.fail_above_pct = 5;
  o.min_ms = 0.001;
  if (gpujit_trace_diff_create(&d, a, b, &o) != 0)
    return;
  gpujit_trace_diff_outcome(d, &v);
  for (int t = 0; t < GPUJIT_TRACE_TABLE_COUNT; t++)
    for (size_t i = 0; i < gpujit_trace_diff_count(d, (gpujit_trace_table)t); i++)
      if (!gpujit_trace_diff_row_at(d, (gpujit_trace_table)t, i)->name)
        abort();
  gpujit_trace_diff_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char base[] =
      "{\"traceEvents\":[{\"name\":\"build m\",\"cat\":\"gpujit\",\"ph\":\"X\",\"ts\":0,\"dur\":900,\"pid\":1,"
      "\"tid\":1},{\"name\":\"compile m.cu\",\"cat\":\"gpujit\",\"ph\":\"X\",\"ts\":1,\"dur\":800,\"pid\":1,\"tid\":1},"
      "{\"name\":\"CUDA C++ Front-End\",\"ph\":\"X\",\"ts\":1,\"dur\":700,\"pid\":1,\"tid\":1}]}";
  gpujit_trace_analysis *a = NULL, *b = NULL;
  size_t unmeasured;
  fz_dir();
  if (gpujit_trace_analysis_create(&a) != 0 || gpujit_trace_analysis_create(&b) != 0)
    abort();
  if (gpujit_trace_analysis_add_json(a, "fuzz", (const char *)data, size) == 0) {
    walk(a);
    gpujit_trace_analysis_recorded(a, &unmeasured);
    gpujit_trace_analysis_add_json(b, "base", base, strlen(base));
    compare(a, a);
    compare(b, a);
    compare(a, b);
    /* the same input twice: a second sample of every module */
    if (gpujit_trace_analysis_add_json(a, "fuzz again", (const char *)data, size) == 0)
      compare(b, a);
  }
  gpujit_error_clear();
  gpujit_trace_analysis_free(a);
  gpujit_trace_analysis_free(b);
  return 0;
}
