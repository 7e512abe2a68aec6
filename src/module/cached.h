/* The cache's side of a build: the lookup before compiling, and what a miss records after. */
#ifndef GPUJIT_MODULE_CACHED_H
#define GPUJIT_MODULE_CACHED_H

#include <stdint.h>

#include "cache/records/head_start.h"
#include "cache/store/key.h"
#include "module/compiler.h"
#include "module/module.h"

/** What a miss carries from the lookup to the store. */
typedef struct gpujit__miss {
  gpujit__head *head;       /* the build's head start (module/build.c owns it), or NULL */
  gpujit__key request;      /* what the build was asked */
  gpujit__compile_deps deps; /* what the compile was seen to probe, and the scan that predicts it */
} gpujit__miss;

/**
 * Request key → manifest → the first recorded build whose dependencies hold → its entry, loaded
 * into `m`. Stages "hash" and "cache lookup". @return 0 on a hit, GPUJIT_ENOENT on a miss.
 */
int gpujit__cached_lookup(gpujit_module *m, gpujit__miss *miss, const gpujit_source *sources, size_t count,
                          const gpujit_module_options *opts);

/** After a local miss: the remote stores (stage "remote fetch"); a hit fills `m`.
 *  @return 0 on a remote hit, GPUJIT_ENOENT otherwise. */
int gpujit__cached_fetch(gpujit_module *m, gpujit__miss *miss, const gpujit_module_options *opts);

/** Before compiling a miss: the moment the compile starts from, for the record (no scan: see compiler.c). */
int gpujit__cached_scan(gpujit__miss *miss, gpujit_module *m, const gpujit_source *sources, size_t count,
                        const gpujit_module_options *opts);

/** What a build does once its module is made and its cache key known, before the entry is
 *  written (a build server's worker answers then; the store follows). */
typedef struct gpujit__built_hook {
  void (*fn)(gpujit_module *m, void *payload);
  void *payload;
  bool called;
} gpujit__built_hook;

/** After compiling: record the dependencies, store the entry under its entry key, add the build
 *  to the manifest. A module whose dependencies cannot be proven is not stored (logged).
 *  @param hook called once the cache key is known, before the entry is written; may be NULL. */
int gpujit__cached_store(gpujit__miss *miss, gpujit_module *m, const gpujit_source *sources, size_t count,
                         const gpujit_module_options *opts, gpujit__built_hook *hook);

/** Free what a miss holds (not `miss` itself). */
void gpujit__miss_free(gpujit__miss *miss);

#endif
