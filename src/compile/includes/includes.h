/* What a compile reads besides its sources: the headers its #include and __has_include lines
 * resolve to through NVRTC's search order, and the paths that must stay absent for those
 * lookups to resolve the same way. */
#ifndef GPUJIT_COMPILE_INCLUDES_H
#define GPUJIT_COMPILE_INCLUDES_H

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

/** Whether the scan met an include it could not resolve: the compile must report what it opened
 *  (NVRTC's time trace), and gpujit__includes_add_opened() be called for each file. `why` is set. */
bool gpujit__includes_needs_trace(const gpujit__includes *inc, const char **why);

/** A file the compile of source `source` opened, included from `includer` (NULL: the source):
 *  added with the lookups that must have failed before it was found. */
int gpujit__includes_add_opened(gpujit__includes *inc, size_t source, const char *path, const char *includer);

/**
 * Resolve every __has_include (also through macros that wrap it) in every file found so far.
 * @return 0; `*provable` is false (with `why`) when one names its header through something the
 *         scan cannot follow, so no record of this compile can be proven valid later.
 */
int gpujit__includes_finish(gpujit__includes *inc, bool *provable, const char **why);

/** The files found, sources excluded: path (absolute, normalised) and content. Borrowed. */
size_t gpujit__includes_count(const gpujit__includes *inc);
const char *gpujit__includes_path(const gpujit__includes *inc, size_t i, const char **data, size_t *size);
/** Paths that must not exist (each the shallowest missing component of a failed lookup). */
size_t gpujit__includes_absent_count(const gpujit__includes *inc);
const char *gpujit__includes_absent(const gpujit__includes *inc, size_t i);
/** Paths a lookup passed over because they exist but are no regular file (a directory `A/h.h`
 *  before `B/h.h`): each must stay no file. */
size_t gpujit__includes_rejected_count(const gpujit__includes *inc);
/** Why the compile must not run (a FIFO, device or socket where NVRTC would read a header), or
 *  NULL. */
const char *gpujit__includes_refused(const gpujit__includes *inc);
const char *gpujit__includes_rejected(const gpujit__includes *inc, size_t i);

void gpujit__includes_free(gpujit__includes *inc);

#endif
