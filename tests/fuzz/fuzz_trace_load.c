/* Fuzz target: traces merged into a trace sink — a file appended to (`gpujit_trace_load`) and a
 * project worker's trace moved onto the coordinating process's tracks — then written out. */
#include "fuzz.h"

#include "trace/sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
  gpujit_trace *t = NULL;
  char *json = NULL;
  size_t len;
  const char *path = fz_file("in.json", data, size);
  int64_t track;

  to.tmp_dir = fz_dir();
  if (gpujit_trace_create(&t, &to) != 0)
    abort();
  gpujit_trace_load(t, path);
  if (gpujit_trace_track(t, &track, "worker 1") == 0)
    gpujit__trace_merge_process(t, (const char *)data, size, 4242, track, "worker 1");
  if (gpujit_trace_to_json(&json, &len, t) == 0) {
    if (strlen(json) != len)
      abort();
    gpujit_free(json);
  }
  gpujit_trace_free(t);
  gpujit_error_clear();
  return 0;
}
