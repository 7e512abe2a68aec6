/* The miss path of a build: NVRTC for each source, nvJitLink for several. */
#ifndef GPUJIT_MODULE_COMPILER_H
#define GPUJIT_MODULE_COMPILER_H

#include <stdbool.h>

#include "compile/includes.h"
#include "module/module.h"

/** What the miss path learns for the cache: `inc` is the include scan (NULL: none wanted); when it
 *  asks for the compile's own record, each compile is traced and the headers it opened added.
 *  `complete` turns false when that record could not be had. */
typedef struct gpujit__compile_deps {
  gpujit__includes *inc;
  bool complete;
} gpujit__compile_deps;

/**
 * Compile `m`'s sources (m->arch, m->output and m->sources set) into m->image, m->kernels,
 * m->lowered and m->log, timing the compile and link stages (traced through opts->trace), and
 * reporting opened headers to `deps` (may be NULL).
 * @return 0, or the compile or link error with NVRTC's or nvJitLink's log in gpujit_error_log().
 */
int gpujit__compile_module(gpujit_module *m, const gpujit_source *sources, size_t count,
                           const gpujit_module_options *opts, gpujit__compile_deps *deps, bool pch_more);

#endif
