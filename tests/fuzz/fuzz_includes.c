/* Fuzz target: the include scan of a user's source (what the cache records as a build's
 * dependencies): #include forms, computed includes, __has_include, #include_next, comments and
 * continuations; and the leading block that names a precompiled header. */
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
  bool provable;
  char *text = fz_str(data, size);

  snprintf(path, sizeof(path), "%s/fuzz.cu", fz_dir());
  src.name = path;
  src.data = text;
  src.size = size;
  o.defines = defines;
  o.defines_count = 2;
  if (gpujit__includes_scan(&inc, &src, &abs_path, 1, &o) == 0) {
    gpujit__includes_needs_trace(inc, &why);
    gpujit__includes_add_opened(inc, 0, "/usr/local/cuda/include/cuda_fp16.h", NULL);
    if (gpujit__includes_finish(inc, &provable, &why) == 0) {
      for (size_t i = 0; i < gpujit__includes_count(inc); i++) {
        const char *d;
        size_t n;
        if (!gpujit__includes_path(inc, i, &d, &n))
          abort();
      }
      for (size_t i = 0; i < gpujit__includes_absent_count(inc); i++)
        gpujit__includes_absent(inc, i);
    }
  }
  gpujit__includes_free(inc);
  gpujit__pch_block_of(&block, text, size, NULL, NULL);
  gpujit__pch_block_of(&block, text, size, "#include <cuda_fp16.h>\n", NULL);
  free(text);
  gpujit_error_clear();
  return 0;
}
