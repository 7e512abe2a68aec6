/* Manifests: from the key of what a build was asked (sources, options, toolkit, arch) to the
 * entries built for it, each with the dependencies that must still hold for it to be served. */
#ifndef GPUJIT_CACHE_RECORDS_MANIFESTS_H
#define GPUJIT_CACHE_RECORDS_MANIFESTS_H

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
/** The same for build `head` (its head start, cache/records/head_start.h; NULL: none), saying in
 *  `miss` why nothing matched: never built with these inputs (source, options, toolkit: the
 *  request key), which recorded header changed and how, or evicted. */
int gpujit__manifest_find_why(gpujit_cache *c, const char *hex, gpujit__head *head, char out_entry[33], char *miss,
                              size_t miss_size);

/** Record build `head`'s result (NULL: no head start to note for): its entry key, the
 *  dependencies checked every time and the shared group. */
int gpujit__manifest_add(gpujit_cache *c, const char *hex, gpujit__head *head, const char *entry,
                         const gpujit__deps *deps, const gpujit__deps *shared);

/** Read a manifest file anywhere, verified (checksum, form). */
int gpujit__manifest_read(const char *path, cJSON **out, char *why, size_t n);
/** The same from a record's bytes. */
int gpujit__manifest_parse(const char *data, size_t len, cJSON **out, char *why, size_t n);

/** Merge a foreign manifest's records into the local one (local records first). */
int gpujit__manifest_merge(gpujit_cache *c, const char *hex, const cJSON *foreign);

/** The entry keys and group digests a manifest records. @return 0, or the read error. */
int gpujit__manifest_refs(gpujit_cache *c, const char *hex, gpujit__strvec *entries, gpujit__strvec *groups);

#endif
