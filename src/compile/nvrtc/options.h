/* Module options: validation, arch syntax and NVRTC support, output kinds, NVRTC flags. */
#ifndef GPUJIT_COMPILE_NVRTC_OPTIONS_H
#define GPUJIT_COMPILE_NVRTC_OPTIONS_H

#include <stdbool.h>

#include "base/buf.h"
#include "gpujit/module.h"

/** Arch syntax only (sm_XX[a|f], compute_XX[a|f]): never initialises NVRTC. */
int gpujit__check_arch_syntax(const char *arch);
/** Arch syntax and NVRTC support (initialises NVRTC). */
int gpujit__check_arch_supported(const char *arch);

/** Copy caller options (version 1 or current; NULL: defaults) into a current-version struct. */
void gpujit__options_current(gpujit_module_options *dst, const gpujit_module_options *src);

/** The image kind for an arch and requested output. */
gpujit_output_kind gpujit__resolve_output(const char *arch, gpujit_output_kind requested);

/** Build NVRTC flags for one source in `source_dir`; `lto` adds -dlto -rdc=true. */
int gpujit__nvrtc_flags(gpujit__strvec *out, const gpujit_module_options *opts, const char *arch,
                        const char *source_dir, bool lto, const char *time_trace_file);

#endif
