/* Fuzz target: `gpujit profile`'s records, JSON lines that injected processes wrote (a crash may
 * cut the last one), as gpujit_profile_load reads them: module rows and totals, then the JSON and
 * the trace written. The rows must account for every launch the totals count, each step's busy
 * and waiting time lie within its window, and the JSON must parse. */
#include <cjson/cJSON.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit_profile *p = NULL;
  const gpujit_profile_module *rows;
  gpujit_profile_totals t;
  char trace[128], *json = NULL;
  uint64_t launches = 0;
  size_t n;
  fz_dir();
  fz_reset();
  fz_file("p1.jsonl", data, size);
  if (gpujit_profile_load(&p, fz_dir()) == 0) {
    gpujit_profile_totals_get(p, &t);
    n = gpujit_profile_modules(p, &rows);
    for (size_t i = 0; i < n; i++)
      launches += rows[i].launches;
    if (launches != t.launches)
      abort(); /* a launch counted in the totals and in no row, or twice */
    const gpujit_profile_step_row *st;
    for (size_t i = 0, ns = gpujit_profile_steps(p, &st); i < ns; i++)
      if (st[i].busy_ms > st[i].window_ms + 1e-9 || st[i].host_wait_ms > st[i].idle_ms + 1e-9 || st[i].busy_pct > 100 + 1e-9)
        abort(); /* GPU time outside its step's window, or waiting while busy */
    if (gpujit_profile_json(p, &json) == 0) {
      cJSON *j = cJSON_Parse(json);
      if (!j)
        abort();
      cJSON_Delete(j);
      free(json);
    }
    snprintf(trace, sizeof(trace), "%s/trace.json", fz_dir());
    gpujit_profile_trace(p, trace);
    gpujit_profile_free(p);
  }
  gpujit_error_clear();
  return 0;
}
