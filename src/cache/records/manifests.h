/* Manifests: from the key of what a build was asked (sources, options, toolkit, arch) to the
 * entries built for it, each with the dependencies that must still hold for it to be served. */
#ifndef GPUJIT_CACHE_MANIFEST_H
#define GPUJIT_CACHE_MANIFEST_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "base/buf.h"
#include "cache/records/deps.h"
#include "cache/records/head_start.h"
#include "gpujit/cache.h"

/** How gpujit__manifest_find_why's reason starts when the request key was never built. */
#define GPUJIT__NEVER_BUILT "never built with this source, these options and this toolkit"

/** At most this many recorded builds per manifest (the newest kept). */
#define GPUJIT__MANIFEST_MAX 8

/**
 * Find the newest recorded build of `hex` whose dependencies all hold: `deps` are checked on
 * every lookup; `shared` (the toolkit's headers, say) once per lookup, unless a voucher (the
 * build server, which watches them) holds it. A record that verifies by content but not by stat
 * is written back.
 * @param out_entry receives the entry key (32 hex digits).
 * @return 0, or GPUJIT_ENOENT (no manifest, none holds, or a damaged manifest: logged, counted).
 */
int gpujit__manifest_find(gpujit_cache *c, const char *hex, char out_entry[33]);
/** The same, saying in `miss` why nothing matched: never built with these inputs (source,
 *  options, toolkit: the request key), which recorded header changed and how, or evicted. */
int gpujit__manifest_find_why(gpujit_cache *c, const char *hex, char out_entry[33], char *miss, size_t miss_size);

/** Something that watches the files of shared groups (the build server) and may vouch that one
 *  holds now: `held` true only when it can say so for certain; false leaves the check here. */
typedef struct gpujit__voucher {
  bool (*held)(void *ctx, const char *digest);
  bool (*absent)(void *ctx); /* optional: true when none is there to ask (this process checks) */
  void *ctx;
} gpujit__voucher;

/** Ask `v` (NULL: none) before checking a shared group in this thread's lookups.
 *  @return the voucher it replaces (put it back when done). */
const gpujit__voucher *gpujit__manifest_voucher(const gpujit__voucher *v);

/** A build on this thread begins (cache/head.c): the check of the group its sources used last time
 *  (`hint` names them) is begun now, unless a voucher answers for groups. NULL: no head start;
 *  else end it with gpujit__head_end. */
gpujit__head *gpujit__manifest_head_start(gpujit_cache *c, const char *hint);

/** The shared group `digest` of this cache as a view, when it is of the binary form read in
 *  place: 0 (`b` holds the bytes `view` lies in), else GPUJIT_ENOENT (free `b` either way). */
int gpujit__group_view(gpujit_cache *c, const char *digest, gpujit__buf *b, gpujit__deps_view *view);

/** Read the shared group `digest` of this cache. @return 0, GPUJIT_ENOENT or GPUJIT_ECORRUPT (`why`). */
int gpujit__group_load(gpujit_cache *c, const char *digest, gpujit__deps *out, char *why, size_t n);

/** Record a build: its entry key, the dependencies checked every time and the shared group. */
int gpujit__manifest_add(gpujit_cache *c, const char *hex, const char *entry, const gpujit__deps *deps,
                         const gpujit__deps *shared);

/** Read a manifest file anywhere, verified (checksum, form). */
int gpujit__manifest_read(const char *path, cJSON **out, char *why, size_t n);
/** The same from a record's bytes. */
int gpujit__manifest_parse(const char *data, size_t len, cJSON **out, char *why, size_t n);
/** Read a dependency group file anywhere (this form or the JSON of gpujit-deps-1), verified. */
int gpujit__group_read(const char *path, gpujit__deps *out, char *why, size_t n);
/** The same from a record's bytes. */
int gpujit__group_parse(const char *data, size_t len, gpujit__deps *out, char *why, size_t n);

/** Merge a foreign manifest's records into the local one (local records first). */
int gpujit__manifest_merge(gpujit_cache *c, const char *hex, const cJSON *foreign);

/** Whether the cache holds group `digest` with exactly these bytes. */
bool gpujit__group_same(gpujit_cache *c, const char *digest, const void *data, size_t len);
/** Store a foreign dependency group unless the cache has it; refused (GPUJIT_ECORRUPT, `why`)
 *  when its content does not hash to its name `digest`. */
int gpujit__group_import(gpujit_cache *c, const char *digest, const gpujit__deps *group, char *why, size_t n);

/** The entry keys and group digests a manifest records. @return 0, or the read error. */
int gpujit__manifest_refs(gpujit_cache *c, const char *hex, gpujit__strvec *entries, gpujit__strvec *groups);

#endif
