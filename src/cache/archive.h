/* One request's cache records packed as an archive in memory, and unpacked with every check an
 * import makes: what travels to and from the remote stores (cache/archive.c). */
#ifndef GPUJIT_CACHE_ARCHIVE_H
#define GPUJIT_CACHE_ARCHIVE_H

#include <stdint.h>

#include "base/buf.h"
#include "gpujit/cache.h"

/** The entry, the request's manifest and its dependency groups, as a zstd tar. */
int gpujit__cache_pack(gpujit_cache *c, const char *request_hex, const char *entry_hex, gpujit__buf *out);

/** Import a packed archive (`name` in messages). */
int gpujit__cache_unpack(gpujit_cache *c, const void *data, size_t len, const char *name, uint64_t max_member_bytes,
                         gpujit_cache_import_result *out);

#endif
