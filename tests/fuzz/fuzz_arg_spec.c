/* Fuzz target: `--arg` launch specs (`i32:1`, `buf:f32:1024=rand`, …): parsed, sized, filled. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = fz_str(data, size);
  gpujit_arg_spec spec;
  fz_dir();
  if (gpujit_arg_spec_parse(&spec, text) == 0) {
    gpujit_arg_size(&spec);
    /* A buffer's host side is filled before its copy; sizes beyond what a test host holds are
     * refused later, against the device's free memory. */
    if (spec.type == GPUJIT_ARG_BUFFER && spec.count <= (8u << 20)) {
      void *host = malloc(spec.count ? spec.count * gpujit_arg_type_size(spec.elem) : 1);
      if (!host)
        abort();
      gpujit_arg_fill(host, &spec);
      free(host);
    }
  }
  gpujit_error_clear();
  free(text);
  return 0;
}
