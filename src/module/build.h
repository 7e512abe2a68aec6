/* The build pipeline's entry points beside the public ones. */
#ifndef GPUJIT_MODULE_BUILD_H
#define GPUJIT_MODULE_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "gpujit/cache.h"
#include "gpujit/module.h"

/** What a project build asks of one module build beyond the public options. */
typedef struct gpujit__build_ctl {
  bool lookup_only; /* a miss returns GPUJIT_ENOENT (error cleared) without compiling or counting */
  bool pch_more;    /* more modules of this include block follow in this process: make the PCH now */
  bool missed;      /* out: the lookup missed (with lookup_only, the build stopped there) */
  char miss_reason[1024]; /* out: why it missed (gpujit_module_cache_miss_reason), or "" */
  /* optional: called once a compiled module is final, before its cache entry is written (a
   * build server's worker answers its client then; the store follows) */
  void (*built)(gpujit_module *m, void *payload);
  void *built_payload;
} gpujit__build_ctl;

/** gpujit_module_build_files() with a control block (NULL: none). */
int gpujit__module_build_files_ctl(gpujit_module **out, const char *const *paths, size_t count,
                                   const gpujit_module_options *opts, gpujit__build_ctl *ctl);

/**
 * The target arch into `out` (at least 32 bytes): `arch` when given, else $GPUJIT_ARCH, else
 * the GPU's — from `cache`'s record for this driver and these GPUs when there is one, else
 * asking the driver (and recording the answer) — else GPUJIT_DEFAULT_ARCH.
 * @return 0, or GPUJIT_EINVAL when $GPUJIT_ARCH is malformed.
 */
int gpujit__resolve_arch(char *out, size_t size, const char *arch, gpujit_cache *cache);

#endif
