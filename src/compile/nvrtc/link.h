/* The nvJitLink stage: linking LTO-IR from several sources into one cubin or PTX. */
#ifndef GPUJIT_COMPILE_NVRTC_LINK_H
#define GPUJIT_COMPILE_NVRTC_LINK_H

#include <stdbool.h>

#include "base/buf.h"
#include "compile/observe/observe.h"
#include "gpujit/module.h"

/** nvJitLink's version (loads nvJitLink). */
int gpujit__nvjitlink_version(int *major, int *minor);

/** Link LTO-IR inputs with nvJitLink into a cubin (or PTX for a virtual arch); with `timing`,
 *  nvJitLink's "-time" report lands in `info_log`. With `observed`, what the link read of the
 *  environment (and what every link of the process depends on) is added to it, or why that cannot
 *  be known goes into its `why`. */
int gpujit__link(gpujit__buf *image, gpujit__buf *info_log, const gpujit__buf *inputs,
                 const char *const *names, size_t count, const gpujit_module_options *opts,
                 const char *arch, gpujit_output_kind output, bool timing, gpujit__observed *observed);

#endif
