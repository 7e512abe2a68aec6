/* The build pipeline's entry points beside the public ones. */
#ifndef GPUJIT_MODULE_BUILD_H
#define GPUJIT_MODULE_BUILD_H

#include <stddef.h>

#include "gpujit/cache.h"

/**
 * The target arch into `out` (at least 32 bytes): `arch` when given, else $GPUJIT_ARCH, else
 * the GPU's — from `cache`'s record for this driver and these GPUs when there is one, else
 * asking the driver (and recording the answer) — else GPUJIT_DEFAULT_ARCH.
 * @return 0, or GPUJIT_EINVAL when $GPUJIT_ARCH is malformed.
 */
int gpujit__resolve_arch(char *out, size_t size, const char *arch, gpujit_cache *cache);

#endif
