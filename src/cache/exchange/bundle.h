/* One request's cache records as one flat value for the remote stores: its entry, its manifest and
 * the manifest's dependency groups, each with its path in the cache, and a checksum of the whole.
 * No archive library on this path: a remote hit pays microseconds, not a library load. */
#ifndef GPUJIT_CACHE_EXCHANGE_BUNDLE_H
#define GPUJIT_CACHE_EXCHANGE_BUNDLE_H

#include <stdint.h>

#include "base/buf.h"
#include "gpujit/cache.h"

int gpujit__bundle_pack(gpujit_cache *c, const char *request_hex, const char *entry_hex, gpujit__buf *out);

/** Check the bundle (checksum, bounds, every name, sizes up to `max_member_bytes`) and import it
 *  like an archive (every entry verified). `name` in messages. With `request` (hex), nothing is
 *  written unless the bundle holds that request's manifest alone and only what it names. */
int gpujit__bundle_unpack(gpujit_cache *c, const void *data, size_t len, const char *name, const char *request,
                          uint64_t max_member_bytes, gpujit_cache_import_result *out);

#endif
