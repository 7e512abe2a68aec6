/* Fuzz target: a remote store's answer — a bundle of one request's entry, manifest and groups —
 * unpacked into an empty cache. The harness re-seals each input with its whole checksum, so the
 * records behind it are what is fuzzed, not the checksum. */
#include <xxhash.h>

#include "fuzz.h"

#include "cache/exchange/bundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache_import_result res;
  gpujit_cache *c = NULL;
  char cache_dir[300];
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy)
    abort();
  memcpy(copy, data, size);
  if (size > sizeof(uint64_t)) {
    uint64_t sum = XXH3_64bits(copy, size - sizeof(sum));
    memcpy(copy + size - sizeof(sum), &sum, sizeof(sum));
  }
  fz_dir();
  fz_reset();
  snprintf(cache_dir, sizeof(cache_dir), "%s/cache", fz_dir());
  co.dir = cache_dir;
  if (gpujit_cache_open(&c, &co) != 0)
    abort();
  gpujit__bundle_unpack(c, copy, size, "fuzz", size % 2 ? NULL : "00112233445566778899aabbccddeeff", 1 << 20, &res);
  gpujit_cache_free(c);
  gpujit_error_clear();
  free(copy);
  return 0;
}
