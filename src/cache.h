/* Internal interface between the build pipeline and the kernel cache. */
#ifndef GPUJIT_CACHE_INTERNAL_H
#define GPUJIT_CACHE_INTERNAL_H

#include <cjson/cJSON.h>

#include "gpujit/cache.h"
#include "module.h"

#define GPUJIT_CACHE_SCHEMA 1

struct gpujit_cache {
  char *dir;
  char *base;
  double lock_timeout_s;
  bool writable;
  bool warned;
};

/** The shared counters' file (binary, updated under flock). */
typedef struct gpujit__stats_file {
  uint64_t magic;
  uint64_t hits, misses, stores, corrupt;
  double saved_ms;
} gpujit__stats_file;

/** Add to the shared counters, read-modify-write under flock, so no process loses a count. */
void gpujit__cache_stats_update(gpujit_cache *c, uint64_t hits, uint64_t misses, uint64_t stores, uint64_t corrupt,
                                double saved_ms);
void gpujit__cache_stats_read(gpujit_cache *c, gpujit__stats_file *s);

typedef struct gpujit__key {
  unsigned char bytes[16];
  char hex[33];
} gpujit__key;

/** A file that went into the key and is dumped with the entry. */
typedef struct gpujit__keyfile {
  char *path;     /* absolute, as the line table names it */
  char *rel;      /* relative to the base dir (or absolute when outside it) */
  const char *data;
  size_t size;
  char *owned;    /* when data was read here */
} gpujit__keyfile;

typedef struct gpujit__keyinfo {
  gpujit__keyfile *files; /* sources first, then user headers */
  size_t count, cap, sources;
  cJSON *inputs;          /* readable key inputs for the metadata */
} gpujit__keyinfo;

void gpujit__keyinfo_free(gpujit__keyinfo *k);

/**
 * Compute the key: schema, gpujit and toolkit identity, canonical options, arch and output,
 * name expressions, every source and every user header it includes (transitively).
 */
int gpujit__cache_key(gpujit__key *out, gpujit__keyinfo *info, gpujit_cache *cache,
                      const gpujit_source *sources, const char *const *abs_paths, size_t count,
                      const gpujit_module_options *opts, const char *arch, gpujit_output_kind output);

/** Look a key up; fills the module on a hit. GPUJIT_ENOENT on a miss (also for damaged entries). */
int gpujit__cache_lookup(gpujit_cache *cache, const gpujit__key *key, gpujit_module *m);

/** Take the per-key compile lock (flock: released by the kernel if the holder dies). */
int gpujit__cache_lock(gpujit_cache *cache, const gpujit__key *key, int *out_fd);
void gpujit__cache_unlock(int fd);

/** Publish an entry atomically. Failures are warnings (the build still succeeds). */
int gpujit__cache_store(gpujit_cache *cache, const gpujit__key *key, const gpujit_module *m,
                        const gpujit__keyinfo *info, const gpujit_module_options *opts);

/** Count a miss in the shared counters. */
void gpujit__cache_count_miss(gpujit_cache *cache);

/** The base directory (NULL when none). */
const char *gpujit__cache_base(const gpujit_cache *cache);

#endif
