/* The miss path of a build: NVRTC for each source, nvJitLink for several. */
#ifndef GPUJIT_MODULE_COMPILER_H
#define GPUJIT_MODULE_COMPILER_H

#include <stdbool.h>

#include "compile/includes/includes.h"
#include "compile/observe/observe.h"
#include "module/module.h"

/** What the miss path learns for the cache: `inc` is the include scan, a predictor only (PCH
 *  planning, the lean pass; NULL: none made); `observed` what NVRTC was seen to probe in every
 *  source's compile, merged — the record's one source of truth; `start` when the first compile
 *  began (gpujit__deps_coarse_clock()). */
typedef struct gpujit__compile_deps {
  gpujit__includes *inc;
  gpujit__observed observed;
  int64_t start;
  uint32_t program; /* the source being compiled, as a probe's `programs` bit (0: one source) */
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
