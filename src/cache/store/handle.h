/* The cache handle every part of the store shares: its directory and mode, and where an entry lives. */
#ifndef GPUJIT_CACHE_STORE_HANDLE_H
#define GPUJIT_CACHE_STORE_HANDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "gpujit/cache.h"

struct gpujit_cache {
  char *dir;
  char *base;
  double lock_timeout_s;
  bool writable;
  bool warned; /* one warning per process and cache */
  struct gpujit__remote *remote; /* remote stores under this cache, or NULL */
};

/** entries/<k[0:2]>/<k[2:32]> under the cache directory. */
void gpujit__cache_entry_path(char *out, size_t size, const gpujit_cache *c, const char *hex);
/** `what`/<k[0:2]>/<k[2:32]> under the cache directory: a record of the layout (manifests, deps). */
void gpujit__cache_record_path(char *out, size_t size, const gpujit_cache *c, const char *what, const char *hex);

#endif
