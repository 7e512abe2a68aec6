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

#endif
