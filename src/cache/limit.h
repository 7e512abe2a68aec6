/* The cache's size limit: where it comes from, a cheap running total of the entries' bytes, and
 * eviction of the least recently used entries after a store that passes it. */
#ifndef GPUJIT_CACHE_LIMIT_H
#define GPUJIT_CACHE_LIMIT_H

#include <stdint.h>

#include "gpujit/cache.h"

/** After a store of `bytes`: add them to the running total and, past the limit, evict. */
void gpujit__cache_stored(gpujit_cache *c, uint64_t bytes);

/**
 * Remove least recently used entries until at most `max_bytes` remain (0: no size bound) and
 * every entry unused for more than `older_than_s` (0: no age bound); entries being read are
 * passed over. The running total is set to what is left. Counts into the out pointers (may be NULL).
 */
int gpujit__cache_evict(gpujit_cache *c, uint64_t max_bytes, double older_than_s, uint64_t *removed,
                        uint64_t *freed, uint64_t *left);

#endif
