/* Fuzz target: `gpujit cache import` of an archive (tar, gzip, zstd, … through libarchive) into an
 * empty cache: member names, types and sizes, then every entry verified. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache_import_result res;
  gpujit_cache *c = NULL;
  char cache_dir[300];
  const char *path;
  fz_dir();
  fz_reset();
  path = fz_file("in.tar", data, size);
  snprintf(cache_dir, sizeof(cache_dir), "%s/cache", fz_dir());
  co.dir = cache_dir;
  if (gpujit_cache_open(&c, &co) != 0)
    abort();
  if (gpujit_cache_import(c, path, 1 << 20, &res) == 0 && res.entries) {
    /* What an import stored, it verified: the cache holds nothing damaged. */
    uint64_t checked = 0, bad = 0;
    if (gpujit_cache_verify(c, 0, NULL, NULL, &checked, &bad) != 0 || bad || checked < res.entries)
      abort();
  }
  gpujit_cache_free(c);
  gpujit_error_clear();
  return 0;
}
