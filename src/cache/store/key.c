/* Cache keys: XXH3-128 over labelled fields, so no two different inputs run together. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "cache/store/key.h"

gpujit__hasher *gpujit__hasher_new(void)
{
  /* The handle is the state itself: XXH3_state_t is what the library allocates, aligned. */
  XXH3_state_t *st = XXH3_createState();
  if (st)
    XXH3_128bits_reset(st);
  return (gpujit__hasher *)st;
}

void gpujit__hasher_free(gpujit__hasher *h) { XXH3_freeState((XXH3_state_t *)h); }

void gpujit__hasher_field(gpujit__hasher *h, const char *label, const void *data, size_t len)
{
  XXH3_state_t *st = (XXH3_state_t *)h;
  uint32_t l = (uint32_t)strlen(label);
  uint64_t n = len;
  XXH3_128bits_update(st, &l, sizeof(l));
  XXH3_128bits_update(st, label, l);
  XXH3_128bits_update(st, &n, sizeof(n));
  XXH3_128bits_update(st, data, len);
}

void gpujit__hasher_str(gpujit__hasher *h, const char *label, const char *s)
{
  gpujit__hasher_field(h, label, s ? s : "", s ? strlen(s) : 0);
}

void gpujit__hasher_digest(gpujit__hasher *h, gpujit__key *out)
{
  XXH128_canonical_t canon;
  XXH128_canonicalFromHash(&canon, XXH3_128bits_digest((XXH3_state_t *)h));
  memcpy(out->bytes, canon.digest, 16);
  for (int i = 0; i < 16; i++)
    snprintf(out->hex + 2 * i, 3, "%02x", out->bytes[i]);
}
