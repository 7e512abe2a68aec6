/* Fuzz target: Nsight Compute's source-page CSV (`gpujit ncu hotspots`), with the default
 * metric, a named one, and a function filter. */
#include "fuzz.h"

static void parse(const uint8_t *data, size_t size, const char *metric, const char *function)
{
  gpujit_ncu_hotspots *h = NULL;
  if (gpujit_ncu_hotspots_parse(&h, (const char *)data, size, metric, function) == 0) {
    for (size_t i = 0; i < gpujit_ncu_hotspots_count(h); i++)
      if (!gpujit_ncu_hotspots_line(h, i))
        abort();
    gpujit_ncu_hotspots_metric(h);
  }
  gpujit_ncu_hotspots_free(h);
  gpujit_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fz_dir();
  parse(data, size, NULL, NULL);
  parse(data, size, "Warp Stall Sampling (Not-issued Samples)", "saxpy");
  return 0;
}
