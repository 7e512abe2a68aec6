/* What a compile will read besides its sources, predicted: the headers its #include lines resolve
 * to through NVRTC's search order (for PCH planning and refusing a FIFO; never a cache record:
 * compile/observe records what a compile read). */
#ifndef GPUJIT_COMPILE_INCLUDES_INCLUDES_H
#define GPUJIT_COMPILE_INCLUDES_INCLUDES_H

#include <stdbool.h>

#include "base/buf.h"
#include "gpujit/module.h"

typedef struct gpujit__includes gpujit__includes;

/**
 * Scan sources (and the prelude) for #include lines, following them through NVRTC's search
 * order (the includer's directory for "…", then -I directories, the source's directory, the
 * toolkit's include/cccl and include, then -I given as NVRTC options), whatever #if surrounds
 * them. Computed includes (#include MACRO) are followed where MACRO is defined as a header name
 * in a scanned file or by -D; one that cannot be is left for the compile's own record (see
 * gpujit__includes_needs_trace()).
 * @return 0, or GPUJIT_ENOMEM / an I/O error reading a header.
 */
int gpujit__includes_scan(gpujit__includes **out, const gpujit_source *sources, const char *const *abs_paths,
                          size_t count, const gpujit_module_options *opts);

/** Keep up to `entries` scans in this process for the next build of the same sources (workers:
 *  the edit loop scans the same headers before every compile); see includes_memo.c for when a
 *  kept scan is used. Off unless called. */
void gpujit__includes_memo_enable(size_t entries);
/** Scans served from what was kept, since the process started (tests, benchmarks). */
size_t gpujit__includes_memo_hits(void);

/** Keep the toolkit headers scans read (their text and directive lines), up to `max_bytes`, for later
 *  scans in this process — a worker compiling module after module of the same headers; a kept
 *  header is used while its file is unchanged (file_memo.c). Off (0) unless called. */
void gpujit__inc_files_keep(size_t max_bytes);
/** Headers served from what was kept, since the process started (tests, benchmarks). */
size_t gpujit__inc_files_hits(void);

/** Whether the scan met an include it could not resolve (a computed include it cannot follow, an
 *  #include_next from a source): the prediction is incomplete and nothing may be planned on it.
 *  `why` is set. */
bool gpujit__includes_needs_trace(const gpujit__includes *inc, const char **why);

/** The files found, sources excluded: path (absolute, normalised) and content. Borrowed. */
size_t gpujit__includes_count(const gpujit__includes *inc);
const char *gpujit__includes_path(const gpujit__includes *inc, size_t i, const char **data, size_t *size);
/** Why the compile must not run (a FIFO, device or socket where NVRTC would read a header), or
 *  NULL. */
const char *gpujit__includes_refused(const gpujit__includes *inc);

void gpujit__includes_free(gpujit__includes *inc);

#endif
