/* A set of strings mapping each to an index: open addressing over borrowed keys. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strset.h"

static uint64_t fnv(const char *s)
{
  uint64_t h = 1469598103934665603ULL;
  while (*s)
    h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
  return h;
}

bool gpujit__strset_find(const gpujit__strset *s, const char *key, size_t *val)
{
  if (!s->slots)
    return false;
  for (size_t i = fnv(key) & (s->slots - 1);; i = (i + 1) & (s->slots - 1)) {
    if (!s->keys[i])
      return false;
    if (strcmp(s->keys[i], key) == 0) {
      if (val)
        *val = s->vals[i];
      return true;
    }
  }
}

static void insert(gpujit__strset *s, const char *key, size_t val)
{
  size_t i = fnv(key) & (s->slots - 1);
  while (s->keys[i])
    i = (i + 1) & (s->slots - 1);
  s->keys[i] = key;
  s->vals[i] = val;
  s->count++;
}

int gpujit__strset_put(gpujit__strset *s, const char *key, size_t val)
{
  if ((s->count + 1) * 2 > s->slots) { /* at most half full */
    gpujit__strset n = {0};
    n.slots = s->slots ? s->slots * 2 : 64;
    n.keys = calloc(n.slots, sizeof(*n.keys));
    n.vals = calloc(n.slots, sizeof(*n.vals));
    if (!n.keys || !n.vals) {
      free(n.keys);
      free(n.vals);
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < s->slots; i++)
      if (s->keys[i])
        insert(&n, s->keys[i], s->vals[i]);
    free(s->keys);
    free(s->vals);
    *s = n;
  }
  insert(s, key, val);
  return 0;
}

void gpujit__strset_free(gpujit__strset *s)
{
  free(s->keys);
  free(s->vals);
  memset(s, 0, sizeof(*s));
}
