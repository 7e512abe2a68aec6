/* Content hashes as gpujit writes them (base/hash.h). */
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "base/hash.h"

void gpujit__hash_hex(char out[33], const void *data, size_t size)
{
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(size ? data : "", size));
  for (int i = 0; i < 16; i++)
    snprintf(out + 2 * i, 3, "%02x", c.digest[i]);
}

bool gpujit__is_digest(const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return len == 32;
}
