/* The kernel cache's store: opaque entries (key → metadata, one image, a source dump) published
 * atomically, verified on the way out, with per-key locks and counters shared by processes.
 * The store knows nothing of modules: the layer above says what an entry holds. */
#ifndef GPUJIT_CACHE_STORE_STORE_H
#define GPUJIT_CACHE_STORE_STORE_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "cache/store/files.h"
#include "gpujit/cache.h"

#include "cache/store/handle.h"

/** The shared counters' file (binary, updated under flock). */
typedef struct gpujit__stats_file {
  uint64_t magic;
  uint64_t hits, misses, stores, corrupt;
  double saved_ms;
  uint64_t uncacheable; /* builds that cannot be cached (__TIME__, options it cannot track): not misses */
} gpujit__stats_file;
/* A stats file written before `uncacheable` was counted: read as such, never reset. */
#define GPUJIT__STATS_FILE_V1_SIZE (offsetof(gpujit__stats_file, uncacheable))

/** Add to the shared counters, read-modify-write under flock, so no process loses a count. */
void gpujit__cache_stats_update(gpujit_cache *c, uint64_t hits, uint64_t misses, uint64_t stores, uint64_t corrupt,
                                double saved_ms);
void gpujit__cache_stats_read(gpujit_cache *c, gpujit__stats_file *s);
/** The miss just counted was a build that cannot be cached: count it as uncacheable instead. */
void gpujit__cache_count_uncacheable(gpujit_cache *c);
/** Count a hit that saved `saved_ms` of compiling, or a miss. */
void gpujit__cache_count_hit(gpujit_cache *c, double saved_ms);
void gpujit__cache_count_miss(gpujit_cache *c);
/** An entry that verified but that the layer above cannot use: logged and counted as damage. */
void gpujit__cache_damaged(gpujit_cache *c, const char *hex, const char *why);

/** One file of an entry's source dump: stored under src/ at `path` (absolute). */
typedef struct gpujit__cache_file {
  const char *path;
  const void *data;
  size_t size;
} gpujit__cache_file;

/** What the layer above stores. */
typedef struct gpujit__cache_put {
  const char *hex;        /**< the key, 32 hex digits */
  cJSON *meta;            /**< descriptive metadata; the store adds schema, key, created,
                               base_dir and the payload table ("files", "image") to it */
  const char *image_name; /**< the image's file name in the entry, e.g. "image.cubin" */
  const void *image;
  size_t image_size;
  const gpujit__cache_file *sources; /**< the source dump */
  size_t sources_count;
  const char *extra_name; /**< an optional payload kept beside the image (say, "profile.json"),
                               described under the metadata key `extra_role`; NULL: none */
  const char *extra_role;
  const void *extra;
  size_t extra_size;
} gpujit__cache_put;

/** Publish an entry atomically. Failures are warnings (one per cache): the build goes on. */
int gpujit__cache_put_entry(gpujit_cache *c, const gpujit__cache_put *entry);

/** An optional payload to read with an entry (see gpujit__cache_put's extra). */
typedef struct gpujit__cache_extra {
  const char *role;  /**< in: its metadata key, e.g. "profile" */
  gpujit__buf data;  /**< out: its bytes, verified; empty when absent or damaged */
  char why[320];     /**< out: why it is empty ("" when absent: the entry has none) */
} gpujit__cache_extra;

/**
 * Read an entry: metadata and image, both verified against their checksums, through one
 * directory handle (a concurrent replacement cannot mix two versions), and mark it used.
 * @param out_meta receives the metadata (caller deletes); @param image receives the image.
 * @param extra NULL, or a payload to read too; its damage is reported in `why`, not as the
 *        entry's (the caller frees `data`).
 * @return 0, or GPUJIT_ENOENT when absent or damaged (damage is logged and counted).
 */
int gpujit__cache_get(gpujit_cache *c, const char *hex, cJSON **out_meta, gpujit__buf *image,
                      gpujit__cache_extra *extra);
/** Take the per-key compile lock (flock: released by the kernel if the holder dies); -1 in
 *  `out_fd` when the cache is read-only, the lock cannot be made, or the wait timed out. */
int gpujit__cache_lock(gpujit_cache *c, const char *hex, int *out_fd);
void gpujit__cache_unlock(int fd);

/** A small record of `kind` under `hex` (say, a GPU's arch under its identity): its bytes into
 *  `out`. @return 0, GPUJIT_ENOENT (none, or damaged: then removed). */
int gpujit__cache_note_get(gpujit_cache *c, const char *kind, const char *hex, gpujit__buf *out);
/** Write one (atomically; nothing when the cache is read-only). */
int gpujit__cache_note_put(gpujit_cache *c, const char *kind, const char *hex, const void *data, size_t len);

/** The base directory (NULL when none). */
const char *gpujit__cache_base(const gpujit_cache *c);

#endif
