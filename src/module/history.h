/* How long a module took to compile when it last missed: the project scheduler starts the
 * longest compiles first. Kept as small cache notes keyed by the sources' paths and the target. */
#ifndef GPUJIT_MODULE_HISTORY_H
#define GPUJIT_MODULE_HISTORY_H

#include <stddef.h>

#include "gpujit/cache.h"

/** Record a compile of `ms` for these sources (absolute or relative paths) and arch. Best effort. */
void gpujit__history_put(gpujit_cache *cache, const char *const *paths, size_t count, const char *arch, double ms);

/** @return the last recorded compile time in ms, or -1 when none. */
double gpujit__history_get(gpujit_cache *cache, const char *const *paths, size_t count, const char *arch);

#endif
