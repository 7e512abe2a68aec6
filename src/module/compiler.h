/* The miss path of a build: NVRTC for each source, nvJitLink for several. */
#ifndef GPUJIT_MODULE_COMPILER_H
#define GPUJIT_MODULE_COMPILER_H

#include "module/module.h"

/**
 * Compile `m`'s sources (m->arch, m->output and m->sources set) into m->image, m->kernels,
 * m->lowered and m->log, timing the compile and link stages (traced through opts->trace).
 * @return 0, or the compile or link error with NVRTC's or nvJitLink's log in gpujit_error_log().
 */
int gpujit__compile_module(gpujit_module *m, const gpujit_source *sources, size_t count,
                           const gpujit_module_options *opts);

#endif
