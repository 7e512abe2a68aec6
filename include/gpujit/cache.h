/* The hashed kernel cache on disk: lookup and atomic publish, plus its administration. */
#ifndef GPUJIT_CACHE_H
#define GPUJIT_CACHE_H

#include "common.h"

GPUJIT_BEGIN_DECLS

typedef struct gpujit_cache gpujit_cache;

/** Version 2 added the remote cache fields; version 1 structs are still accepted. */
#define GPUJIT_CACHE_OPTIONS_VERSION 2

typedef struct gpujit_cache_options {
  unsigned int version;
  /** The cache directory; NULL: $GPUJIT_CACHE_DIR, else $XDG_CACHE_HOME/gpujit, else
   *  ~/.cache/gpujit. */
  const char *dir;
  /** Paths under this directory enter keys relative to it, so a cache built in one checkout
   *  hits in another (like ccache's base_dir). NULL: $GPUJIT_BASE_DIR, else none (absolute). */
  const char *base_dir;
  /** Seconds to wait for another process compiling the same key before compiling anyway. */
  double lock_timeout_s;
  /** Version 2: remote stores under this cache, tried in order: URLs separated by spaces
   *  (`http://…`, `https://…`, `redis://…`, each with `|name=value` attributes; see
   *  docs/cache-in-ci.md). NULL: $GPUJIT_REMOTE_CACHE, else none. A local miss asks them; a
   *  compile is stored to them. */
  const char *remote;
  /** Version 2: 1: never write to the remote stores; -1: $GPUJIT_REMOTE_READ_ONLY (default). */
  int remote_read_only;
} gpujit_cache_options;

#define GPUJIT_CACHE_OPTIONS_INIT { GPUJIT_CACHE_OPTIONS_VERSION, NULL, NULL, 600.0, NULL, -1 }

/** @return 0, or GPUJIT_EVERSION. */
GPUJIT_API int gpujit_cache_options_init(gpujit_cache_options *opts, unsigned int version);

/**
 * Open (creating with mode 0700 when missing) a cache. A directory that cannot be created or
 * written still opens: lookups work where reads do, stores are skipped with one warning.
 * @return 0, GPUJIT_EINVAL (the path is a file), GPUJIT_ENOMEM, GPUJIT_EVERSION.
 */
GPUJIT_API int gpujit_cache_open(gpujit_cache **out, const gpujit_cache_options *opts);

/**
 * Open a cache for inspecting and maintaining it, creating nothing where there is none: a missing
 * directory opens as an empty cache that stores nothing (stats are zeros, nothing is listed),
 * and a directory holding files that are not a gpujit cache's is refused, never written into.
 * @return 0, GPUJIT_EINVAL (a file, or a directory of other files), GPUJIT_ENOMEM,
 *         GPUJIT_EVERSION.
 */
GPUJIT_API int gpujit_cache_open_existing(gpujit_cache **out, const gpujit_cache_options *opts);

/**
 * The directory a cache opened with no `dir` uses, and what named it (static storage):
 * "GPUJIT_CACHE_DIR", "XDG_CACHE_HOME" ($XDG_CACHE_HOME/gpujit) or "HOME" (~/.cache/gpujit).
 * Creates nothing. *out is the caller's to free (gpujit_free). `origin` may be NULL.
 * @return 0, GPUJIT_EINVAL (out is NULL), GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_cache_default_dir(char **out, const char **origin);

/** Close a cache; NULL is a no-op. */
GPUJIT_API void gpujit_cache_free(gpujit_cache *cache);

/** @return the cache directory (borrowed). */
GPUJIT_API const char *gpujit_cache_path(const gpujit_cache *cache);

/** @return whether the cache can store entries (false: read-only or unwritable). */
GPUJIT_API int gpujit_cache_writable(const gpujit_cache *cache);

/** Counters shared by every process using the cache. */
typedef struct gpujit_cache_stats {
  uint64_t entries;
  uint64_t bytes; /**< what the cache occupies on disk (allocated blocks, directories, records,
                       notes and settings too): what the size limit counts */
  uint64_t hits;
  uint64_t misses;
  uint64_t stores;
  uint64_t corrupt;        /**< entries found damaged (checksum, truncation, bad metadata) */
  double compile_ms_saved; /**< compile time the hits did not spend */
  uint64_t uncacheable;    /**< builds that cannot be cached (__TIME__, __DATE__, NVRTC options the
                                cache cannot track), compiled every time: not misses (ccache's
                                "uncacheable"), so not in the hit rate */
} gpujit_cache_stats;

/** What the remote stores did for this cache (all processes). */
typedef struct gpujit_cache_remote_stats {
  uint64_t hits, misses, errors; /**< errors: a server failed, or an entry from it did not verify */
  uint64_t bytes_in, bytes_out;
  double compile_ms_saved; /**< compile time the remote hits did not spend */
} gpujit_cache_remote_stats;

/** Read the remote stores' shared counters. */
GPUJIT_API int gpujit_cache_remote_stats_get(gpujit_cache *cache, gpujit_cache_remote_stats *out);

/** Count entries and bytes, and read the shared counters. */
GPUJIT_API int gpujit_cache_stats_get(gpujit_cache *cache, gpujit_cache_stats *out);

/** One entry, as listed. Strings are borrowed for the callback's duration. */
typedef struct gpujit_cache_entry {
  const char *key;     /**< 32 hex digits */
  const char *module;
  const char *arch;
  const char *kind;    /**< "cubin", "ptx", "ltoir" */
  const char *kernels; /**< space-separated */
  uint64_t bytes;      /**< the whole entry on disk */
  int64_t created;     /**< Unix seconds */
  int64_t last_used;   /**< Unix seconds */
  double compile_ms;
} gpujit_cache_entry;

typedef int (*gpujit_cache_entry_cb)(const gpujit_cache_entry *entry, void *payload);

/** Call `cb` for each readable entry, most recently used first; a non-zero return stops. */
GPUJIT_API int gpujit_cache_list(gpujit_cache *cache, gpujit_cache_entry_cb cb, void *payload);

/**
 * Find an entry by key or unique key prefix (at least 4 hex digits).
 * @param out_dir receives the entry's directory (caller frees with gpujit_free()).
 * @return 0, GPUJIT_ENOENT, or GPUJIT_EINVAL (bad or ambiguous prefix).
 */
GPUJIT_API int gpujit_cache_entry_dir(char **out_dir, gpujit_cache *cache, const char *key);

/** The entry's metadata JSON (caller frees with gpujit_free()). */
GPUJIT_API int gpujit_cache_show(char **out_json, gpujit_cache *cache, const char *key);

/** Reports one dumped source: the path the line table names, and where its copy lies. */
typedef int (*gpujit_cache_source_cb)(const char *named_path, const char *dump_path, void *payload);

/**
 * List an entry's source dump: every source and user header, at the path that the NVRTC
 * program name and line table name. A non-zero return from `cb` stops.
 * @return 0, GPUJIT_ENOENT, GPUJIT_EINVAL (bad prefix), GPUJIT_ECORRUPT (unreadable metadata).
 */
GPUJIT_API int gpujit_cache_sources(gpujit_cache *cache, const char *key, gpujit_cache_source_cb cb,
                                    void *payload);

/** Remove every entry with the manifests and dependency records that lead to it, and reset the
 *  counters (local and remote); the size limit and compile-time notes stay, as do other
 *  processes' temp files. */
GPUJIT_API int gpujit_cache_clear(gpujit_cache *cache, uint64_t *removed);

/** Zero the counters (hits, misses, stores, corrupt, time saved; the remote stores' too) and
 *  keep every entry — ccache's -z, to measure one CI run. @return 0, GPUJIT_EINVAL, GPUJIT_EIO. */
GPUJIT_API int gpujit_cache_zero_stats(gpujit_cache *cache);

/**
 * Remove least recently used entries until the cache holds at most `max_bytes` (0: no size
 * limit), and every entry unused for more than `older_than_s` seconds (0: no age limit).
 */
GPUJIT_API int gpujit_cache_prune(gpujit_cache *cache, uint64_t max_bytes, double older_than_s,
                                  uint64_t *removed, uint64_t *freed_bytes);

/**
 * The cache's size limit: $GPUJIT_CACHE_MAX_SIZE, else the setting kept in the cache directory
 * (gpujit_cache_limit_set()), else none (0). After a store that passes it, the least recently
 * used entries are evicted down to 90 % of it; an entry another process is reading is kept.
 * @param source receives where the limit came from (static), may be NULL.
 * @return 0, or GPUJIT_EINVAL when the variable or the setting is malformed.
 */
GPUJIT_API int gpujit_cache_limit_get(gpujit_cache *cache, uint64_t *bytes, const char **source);

/** Keep `bytes` (0: none) as the cache's setting and evict down to it now: how many entries went
 *  and the disk they freed into `removed` and `freed_bytes` (each may be NULL).
 *  @return 0, GPUJIT_EINVAL, GPUJIT_EIO (a read-only cache). */
GPUJIT_API int gpujit_cache_limit_set(gpujit_cache *cache, uint64_t bytes, uint64_t *removed, uint64_t *freed_bytes);

/**
 * Parse a size as ccache does (`ccache -M`, max_size): a number, a decimal point allowed, with an
 * optional unit: k/K, M, G, T (each with or without B: kB, MB, GB, TB) are powers of 1000; Ki, Mi,
 * Gi, Ti (KiB, MiB, GiB, TiB) powers of 1024; no unit is GiB ("5": 5 GiB, as `ccache -M 5`); "B"
 * alone is bytes; "0" and "none" are 0 (no limit).
 * @return 0, or GPUJIT_EINVAL whose message names the text and the units taken.
 */
GPUJIT_API int gpujit_cache_parse_size(const char *text, uint64_t *bytes);

/**
 * Parse an age as ccache's --evict-older-than: whole digits with s (seconds) or d (days), or
 * gpujit's m, h, w (minutes, hours, weeks). A bare number is refused (GPUJIT_EINVAL).
 */
GPUJIT_API int gpujit_cache_parse_age(const char *text, double *seconds);

#define GPUJIT_CACHE_EXPORT_OPTIONS_VERSION 1

/** Which entries an export takes. */
typedef struct gpujit_cache_export_options {
  unsigned int version;
  double used_since;          /**< Unix seconds: only entries used (hit or stored) since; 0: all */
  const char *const *keys;    /**< only these entry keys (or prefixes); NULL: all */
  size_t keys_count;
} gpujit_cache_export_options;

#define GPUJIT_CACHE_EXPORT_OPTIONS_INIT { GPUJIT_CACHE_EXPORT_OPTIONS_VERSION, 0, NULL, 0 }

GPUJIT_API int gpujit_cache_export_options_init(gpujit_cache_export_options *opts, unsigned int version);

/**
 * Write the chosen entries, the manifests that name them and their dependency groups into one
 * archive (libarchive; `FILE.tar.zst`, `.tar.gz`, `.tar.xz` compress, anything else is plain tar),
 * written to a temporary name and renamed.
 * @return 0, GPUJIT_EIO (message names the file), GPUJIT_EVERSION.
 */
GPUJIT_API int gpujit_cache_export(gpujit_cache *cache, const char *path, const gpujit_cache_export_options *opts,
                                   uint64_t *out_entries);

/** What an import did. */
typedef struct gpujit_cache_import_result {
  uint64_t entries;   /**< entries added */
  uint64_t present;   /**< entries already here and good: kept */
  uint64_t manifests; /**< manifests merged */
  uint64_t rejected;  /**< entries or records that did not verify: not stored (logged) */
} gpujit_cache_import_result;

/**
 * Import an archive made by gpujit_cache_export(). Every member's name, type and size is checked
 * first: absolute paths, "..", links, devices and members over `max_member_bytes` (0: 1 GiB)
 * refuse the whole archive with an error naming the member, and nothing is stored. Every
 * entry is then verified (checksums, schema, key) and a bad one is not stored; a good local
 * entry is never replaced.
 * @return 0, GPUJIT_ENOENT, GPUJIT_EPARSE (hostile or malformed archive), GPUJIT_EIO.
 */
GPUJIT_API int gpujit_cache_import(gpujit_cache *cache, const char *path, uint64_t max_member_bytes,
                                   gpujit_cache_import_result *out);

/** Reports a damaged entry found by gpujit_cache_verify(). */
typedef void (*gpujit_cache_bad_cb)(const char *key, const char *problem, void *payload);

/**
 * Check every entry's metadata and every payload's checksum; with `remove_bad`, delete damaged
 * entries. @param out_checked / out_bad may be NULL.
 */
GPUJIT_API int gpujit_cache_verify(gpujit_cache *cache, int remove_bad, gpujit_cache_bad_cb cb,
                                   void *payload, uint64_t *out_checked, uint64_t *out_bad);

GPUJIT_END_DECLS

#endif
