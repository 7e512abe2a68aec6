/* Fuzz target: `gpujit run --launch plan.json` launch plans, as the CLI reads them. */
#include "fuzz.h"

#include "cli/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static run_ctx *r;
  cli_ctx ctx = {0, false, "gpujit"};
  const char *path;
  if (!r) {
    /* The CLI reports to stderr; a fuzzer would print millions of lines. Sanitizer and fuzzer
     * reports write to the descriptor, not this stream, and stay visible. */
    FILE *null = fopen("/dev/null", "w");
    if (null)
      stderr = null;
    if (!(r = calloc(1, sizeof(*r))))
      abort();
  }
  memset(r, 0, sizeof(*r));
  path = fz_file("plan.json", data, size);
  if (load_launch_file(&ctx, r, path) == EXIT_OK && r->nlaunches == 0)
    abort(); /* success means at least one launch */
  gpujit_error_clear();
  return 0;
}
