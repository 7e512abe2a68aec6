/* Cache archives: export (cache/exchange/archive.c) and import (cache/exchange/import.c) of entries with their
 * manifests and dependency groups; the checks an import makes, shared with remote bundles. */
#ifndef GPUJIT_CACHE_EXCHANGE_ARCHIVE_H
#define GPUJIT_CACHE_EXCHANGE_ARCHIVE_H

#include "gpujit/cache.h"

/** Why `name` is not a file an archive or bundle may bring into the cache, or NULL when it may. */
const char *gpujit__cache_member_problem(const char *name);

/** Bring what was extracted under `stage` (the cache's own layout) in: every entry verified,
 *  a good local one kept, manifests merged, groups added. */
int gpujit__cache_import_staged(gpujit_cache *c, const char *stage, gpujit_cache_import_result *res);

#endif
