/* A build's dependencies for the cache, from the include scan and the compile's own record. */
#ifndef GPUJIT_MODULE_DEPS_H
#define GPUJIT_MODULE_DEPS_H

#include <stdint.h>

#include "cache/deps.h"
#include "compile/includes.h"

/**
 * Split what the scan found into the dependencies checked on every lookup (`deps`: the user's
 * headers and failed lookups outside the toolkit) and the toolkit's (`shared`: checked once per
 * process and group), hashing each file's content as it was read after `read_start`.
 */
int gpujit__module_deps(gpujit__deps *deps, gpujit__deps *shared, const gpujit__includes *inc, const char *base,
                        int64_t read_start);

/** Whether `path` lies in the toolkit's include tree. */
bool gpujit__in_toolkit(const char *path);

/**
 * Whether what a build read can stand for its output next time: not when a raw NVRTC option
 * names a file the cache cannot track or cannot be read for certain, nor (unless
 * GPUJIT_CACHE_TIME_MACROS=1) when a source, header, define or the prelude uses __TIME__,
 * __DATE__ or __TIMESTAMP__. `why` says which, when not.
 */
bool gpujit__module_cacheable(const gpujit_module_options *o, const gpujit_source *sources, const char *const *paths,
                              size_t count, const gpujit__includes *inc, char *why, size_t why_size);

#endif
