/* What the cache occupies on disk: the running total in <cache>/size, kept under flock, and the
 * writes of records (manifests, dependency groups, notes) that count into it. */
#ifndef GPUJIT_CACHE_STORE_TOTAL_H
#define GPUJIT_CACHE_STORE_TOTAL_H

#include <stdbool.h>
#include <stdint.h>

#include "gpujit/cache.h"

/** Disk use of one file or directory entry (allocated blocks, as du counts them); 0 if absent. */
uint64_t gpujit__disk_usage(const char *path);

/** Open and lock the running total: `*bytes` is it, `*known` whether the file held one.
 *  @return the descriptor to pass to gpujit__cache_total_put(), or -1. */
int gpujit__cache_total_open(gpujit_cache *c, uint64_t *bytes, bool *known);
/** Write `bytes` as the total and unlock (closes fd). */
void gpujit__cache_total_put(int fd, uint64_t bytes, bool write);
/** Add `delta` bytes to a known total (an unknown one is counted afresh at the next eviction). */
void gpujit__cache_total_add(gpujit_cache *c, int64_t delta);

/** The blocks of the directory that will hold a new file or entry and of its parent (0 for one
 *  absent): taken before and after the store, their difference counts too — a shard directory
 *  made, or one that grew (ext4 past a block of names; xfs from names kept in the inode to a
 *  block of its own). */
uint64_t gpujit__cache_dirs_usage(const char *dir);

/** Write a checksummed record (gpujit__write_blob) at `path` in the cache, counting what it
 *  adds to the disk into the running total. */
int gpujit__cache_write_record(gpujit_cache *c, const char *path, const char *magic, const void *data, size_t len);

#endif
