/* The cache's files: payloads with checksums, metadata, atomic publish, listing, removal. */
#ifndef GPUJIT_CACHE_STORE_FILES_H
#define GPUJIT_CACHE_STORE_FILES_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "gpujit/cache.h"

/** The entry format's version, in every meta.json; another version reads as damaged. */
#define GPUJIT_CACHE_SCHEMA 2

typedef struct gpujit__entry {
  char hex[33];
  uint64_t bytes;
  int64_t used_ns; /* last use, for ordering */
  gpujit_cache_entry pub; /* strings below are owned */
  char *module, *arch, *kind, *kernels;
} gpujit__entry;

typedef struct gpujit__entry_list {
  gpujit__entry *items;
  size_t count, cap;
} gpujit__entry_list;

/** Write a new file dir/rel (parents created; an existing one is an error), not fsynced: every
 *  cache file is checksummed, so a torn one reads as damaged. */
int gpujit__write_new(const char *dir, const char *rel, const void *data, size_t len);
/** Write `data` to dir/rel (parents created), and record its size and XXH3 in
 *  meta["files"][rel] (and meta[role] when role is given). */
int gpujit__write_payload(const char *dir, const char *rel, const void *data, size_t len, cJSON *meta,
                          const char *role);
/** Why relative path `p` may leave its directory (an empty, "." or ".." component), or NULL: the
 *  check of every name an import, a remote bundle or the source dump brings into an entry. */
const char *gpujit__path_components_problem(const char *p);
/** Why `path` cannot name a file of an entry's source dump (its member is "src" + `path`): not
 *  absolute, or a ".", ".." or empty component; NULL when it can. */
const char *gpujit__cache_dump_problem(const char *path);
/** Write meta.json and its checksum meta.xxh3. */
int gpujit__write_meta(const char *dir, cJSON *meta);
/** Check meta.json's bytes against its checksum (meta.xxh3's bytes) and schema; parsed to `out`. */
int gpujit__meta_check(const char *meta, size_t len, const char *sum, size_t sum_len, cJSON **out, char *why,
                       size_t why_size);
/** Check a payload's bytes against its description {"file","size","xxh3"} (the checksum not
 *  recomputed when `sum_known`). */
int gpujit__payload_check(const cJSON *desc, const void *data, size_t len, bool sum_known, char *why,
                          size_t why_size);
/** Read and verify meta.json through a directory handle; `why` says what is wrong. */
int gpujit__read_meta(gpujit__buf *buf, cJSON **out, int dfd, char *why, size_t why_size);
/** Read one payload described by {"file","size","xxh3"} and verify it. */
int gpujit__read_payload(gpujit__buf *out, int dfd, const cJSON *desc, char *why, size_t why_size);
/** Write a one-file record atomically (temp file, rename): "MAGIC <xxh3-64>\n" then the bytes.
 *  `path` lies beneath the cache directory `top`; no symbolic link beneath `top` is followed
 *  (gpujit__dir_open_beneath), and a record past the file size limit is not written. */
int gpujit__write_blob(const char *top, const char *path, const char *magic, const void *data, size_t len);
/** Check a record's bytes (`data`, `len`): the content starts at data + *offset. */
int gpujit__blob_check(const char *data, size_t len, size_t *offset, const char *magic, char *why, size_t n);
/** Read one and check it: the bytes start at out->data + *offset. GPUJIT_ENOENT when absent,
 *  GPUJIT_ECORRUPT (with `why`) when truncated, foreign or altered. */
int gpujit__read_blob(gpujit__buf *out, size_t *offset, const char *path, const char *magic, char *why, size_t n);
/** rename(tmp, final); a damaged entry already at `final` is moved aside and removed. */
int gpujit__publish_dir(const char *cache_dir, const char *tmp, const char *final);
/** Move an entry out of entries/ (atomically) and delete it. */
int gpujit__remove_entry(const char *cache_dir, const char *entry);
/** Called with a file's root and its path under it. */
typedef int (*gpujit__file_fn)(const char *root, const char *rel, void *payload);
/** Every regular file beneath root/rel, depth first in name order; stops at the first error. */
int gpujit__walk_files(const char *root, const char *rel, gpujit__file_fn fn, void *payload);

/** Called with a record's path and its 32-digit key. */
typedef int (*gpujit__record_fn)(const char *path, const char *hex, void *payload);
/** Every record of the cache layout under dir/what (`<2 hex>/<30 hex>`: manifests, deps, entries). */
int gpujit__each_record(const char *dir, const char *what, gpujit__record_fn fn, void *payload);

/** The bytes of the files beneath a directory. */
uint64_t gpujit__dir_bytes(const char *path);
/** Every entry directory; with `meta`, metadata read and sorted most recently used first. */
int gpujit__entries(gpujit__entry_list *out, const char *cache_dir, bool meta);
void gpujit__entry_list_free(gpujit__entry_list *l);
/** Check metadata and every payload of an entry. */
int gpujit__verify_entry(const char *entry, char *why, size_t why_size);

#endif
