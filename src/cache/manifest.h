/* Manifests: from the key of what a build was asked (sources, options, toolkit, arch) to the
 * entries built for it, each with the dependencies that must still hold for it to be served. */
#ifndef GPUJIT_CACHE_MANIFEST_H
#define GPUJIT_CACHE_MANIFEST_H

#include "cache/deps.h"
#include "gpujit/cache.h"

/** At most this many recorded builds per manifest (the newest kept). */
#define GPUJIT__MANIFEST_MAX 8

/**
 * Find the newest recorded build of `hex` whose dependencies all hold: `deps` are checked on
 * every lookup; `shared` (the toolkit's headers, say) once per process and group, then again
 * only after a second. A record that verifies by content but not by stat is written back.
 * @param out_entry receives the entry key (32 hex digits).
 * @return 0, or GPUJIT_ENOENT (no manifest, none holds, or a damaged manifest: logged, counted).
 */
int gpujit__manifest_find(gpujit_cache *c, const char *hex, char out_entry[33]);

/** Record a build: its entry key, the dependencies checked every time and the shared group. */
int gpujit__manifest_add(gpujit_cache *c, const char *hex, const char *entry, const gpujit__deps *deps,
                         const gpujit__deps *shared);

#endif
