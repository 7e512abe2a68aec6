/* Why a request was never built: what differs from the last build of the same module (its name
 * and source paths), field by field — an option, the arch, the toolkit, a source's text. */
#ifndef GPUJIT_MODULE_EXPLAIN_H
#define GPUJIT_MODULE_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "gpujit/cache.h"

/** Remember `inputs` (a request's readable key fields) as the last build of this module. */
void gpujit__explain_put(gpujit_cache *c, const char *name, const char *const *paths, size_t count,
                         const cJSON *inputs);
/** What changed from the last build of this module to `inputs`, as "arch sm_80 -> sm_90; -D
 *  N=2 added, -D N=1 gone" into out; false when no earlier build is on record or nothing said. */
bool gpujit__explain_diff(gpujit_cache *c, const char *name, const char *const *paths, size_t count,
                          const cJSON *inputs, char *out, size_t size);

#endif
