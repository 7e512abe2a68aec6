/* Fuzz target: NVRTC's own --fdevice-time-trace files as a compile reads them: phase times
 * (the fast scan and its parsing fallback), events merged into a gpujit trace, the headers it
 * opened with their includers, and a compile profile. */
#include "fuzz.h"

#include "trace/events.h"
#include "trace/nvrtc.h"

static int opened(const char *path, const char *includer, void *payload)
{
  (void)includer;
  if (!path)
    abort();
  ++*(size_t *)payload;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
  gpujit_trace *t = NULL;
  gpujit__buf text = {0};
  gpujit__profile p = {0};
  double phase_ms[4] = {0, 0, 0, 0};
  size_t headers = 0;
  char *json = NULL;
  size_t len;

  to.tmp_dir = fz_dir();
  if (gpujit_trace_create(&t, &to) != 0)
    abort();
  if (gpujit__buf_put(&text, data, size) < 0)
    abort();
  gpujit__trace_merge_nvrtc_text(t, &text, 1000, 5000, phase_ms); /* takes the text over */
  if (gpujit_trace_to_json(&json, &len, t) == 0) /* expands the deferred events */
    gpujit_free(json);
  gpujit__nvrtc_trace_headers((const char *)data, size, opened, &headers);
  gpujit__profile_add_nvrtc(&p, (const char *)data, size);
  gpujit__profile_free(&p);
  gpujit__buf_free(&text);
  gpujit_trace_free(t);
  gpujit_error_clear();
  return 0;
}
