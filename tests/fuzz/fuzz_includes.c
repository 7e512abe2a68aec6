/* Fuzz target: the include prediction of a user's source (what plans a precompiled header):
 * #include forms, computed includes, #include_next, comments and continuations; and the leading
 * block that names a precompiled header. */
#include "fuzz.h"

#include "compile/includes/includes.h"
#include "compile/pch/pch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *defines[] = {"HEADER=\"cuda_fp16.h\"", "N=4"};
  gpujit_source src;
  gpujit__includes *inc = NULL;
  gpujit__pch_block block;
  char path[300];
  const char *abs_path = path, *why;
  char *text = fz_str(data, size);

  snprintf(path, sizeof(path), "%s/fuzz.cu", fz_dir());
  src.name = path;
  src.data = text;
  src.size = size;
  o.defines = defines;
  o.defines_count = 2;
  if (gpujit__includes_scan(&inc, &src, &abs_path, 1, &o) == 0) {
    gpujit__includes_needs_trace(inc, &why);
    for (size_t i = 0; i < gpujit__includes_count(inc); i++) {
      const char *d;
      size_t n;
      if (!gpujit__includes_path(inc, i, &d, &n))
        abort();
    }
    gpujit__includes_refused(inc);
  }
  gpujit__includes_free(inc);
  gpujit__pch_block_of(&block, text, size, NULL, NULL);
  gpujit__pch_block_of(&block, text, size, "#include <cuda_fp16.h>\n", NULL);
  free(text);
  gpujit_error_clear();
  return 0;
}
