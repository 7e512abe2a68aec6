/* The cache's size limit on its disk use: where it comes from, and eviction of the least recently
 * used entries (and the records only they needed) after a store that passes it. */
#ifndef GPUJIT_CACHE_UPKEEP_LIMIT_H
#define GPUJIT_CACHE_UPKEEP_LIMIT_H

#include <stdint.h>

#include "gpujit/cache.h"

/** After a store is complete (its entry and records written, and sent to remote stores): past
 *  the limit, evict to 90 % of it. Stores and record writes count into the running total as
 *  they go (cache/store/total.c); eviction waits for this, so no record is left behind it. */
void gpujit__cache_enforce_limit(gpujit_cache *c);

/**
 * Remove least recently used entries until at most `max_bytes` remain (0: no size bound) and
 * every entry unused for more than `older_than_s` (0: no age bound); entries being read are
 * passed over. The running total is set to what is left. Counts into the out pointers (may be NULL).
 */
int gpujit__cache_evict(gpujit_cache *c, uint64_t max_bytes, double older_than_s, uint64_t *removed,
                        uint64_t *freed, uint64_t *left);

#endif
