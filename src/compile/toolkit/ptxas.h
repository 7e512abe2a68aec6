/* ptxas for the lean path: the toolkit's executable, whole-program as NVRTC runs it. */
#ifndef GPUJIT_COMPILE_TOOLKIT_PTXAS_H
#define GPUJIT_COMPILE_TOOLKIT_PTXAS_H

#include "base/buf.h"
#include "compile/toolkit/toolkit.h"
#include "gpujit/module.h"

/**
 * Assemble `ptx` for `arch` (sm_XX) with the toolkit's ptxas: line info, -G, maxrregcount,
 * Ofast-compile and the ptxas options given to NVRTC as the options say; `-v`'s per-kernel lines
 * (and any warnings) appended to `log`. PTX in and cubin out through pipes: no files. `from`: the
 * PTX NVRTC made that `ptx` was made from (the lean pass's input), or NULL: under gpujit profile,
 * its hash goes to ptxas as GPUJIT_PROFILE_FROM_HASH, so that the report takes this ptxas for a
 * stage of that compile (a pipe's content is not otherwise known to it).
 * @return 0; GPUJIT_ENOENT (no ptxas), GPUJIT_EIO, GPUJIT_ELINK (ptxas failed: its output in
 *   gpujit_error_log()), GPUJIT_ENOMEM.
 */
int gpujit__ptxas(gpujit__buf *cubin, gpujit__buf *log, const gpujit__buf *ptx, const gpujit__buf *from,
                  const char *arch, const gpujit_module_options *opts);

#endif
