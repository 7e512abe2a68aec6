/* A module as a cache entry and back: the module layer's side of the cache. */
#ifndef GPUJIT_MODULE_ENTRY_H
#define GPUJIT_MODULE_ENTRY_H

#include "cache/store/key.h"
#include "gpujit/cache.h"
#include "cache/store/store.h"
#include "module/key.h"
#include "module/module.h"

/**
 * Look `key` up and fill `m` (whose name, arch, output and name expressions are set) on a hit;
 * the image is relocated to the cache's base directory and the hit counted. `extra` (may be NULL)
 * asks for a payload of the entry too (gpujit__cache_get).
 * @return 0, or GPUJIT_ENOENT on a miss (absent, damaged, or not relocatable here).
 */
int gpujit__entry_lookup(gpujit_cache *cache, const gpujit__key *key, gpujit_module *m, gpujit__cache_extra *extra);

/** Store a freshly built module with its readable key inputs and the files to dump (sources and
 *  the user's headers). Failures are warnings. */
int gpujit__entry_store(gpujit_cache *cache, const gpujit__key *key, const gpujit_module *m, const cJSON *inputs,
                        const gpujit__cache_file *dump, size_t dump_count);

/** A traced hit: write the compile profile its entry recorded (read with the entry as the
 *  "profile" extra) into `trace`, or a note saying why there is none. Never fails the build. */
void gpujit__entry_replay_profile(const gpujit__cache_extra *profile, const gpujit_module *m, gpujit_trace *trace);

#endif
