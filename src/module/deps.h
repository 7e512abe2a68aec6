/* A build's dependencies for the cache: what NVRTC was seen to probe (compile/observe/observe.h), made
 * into the records a lookup replays. */
#ifndef GPUJIT_MODULE_DEPS_H
#define GPUJIT_MODULE_DEPS_H

#include <stdint.h>

#include "cache/records/deps.h"
#include "compile/observe/observe.h"
#include "gpujit/module.h"

/** A file the compile read, as read again for its record. */
typedef struct gpujit__read_file {
  char *path; /* as NVRTC named it */
  gpujit__buf data;
  bool toolkit; /* under the toolkit's include tree */
} gpujit__read_file;

/** A compile's record: the dependencies checked on every lookup (`deps`: outside the toolkit,
 *  relative to the base directory where under it), the toolkit's (`shared`: one group, verified
 *  once per lookup), and the files read. */
typedef struct gpujit__observed_deps {
  gpujit__deps deps, shared;
  gpujit__read_file *files;
  size_t count, cap;
} gpujit__observed_deps;

/**
 * Every probe of `o` as a dependency: a file (its content, read now), a path that must stay
 * absent, a path that must stay no regular file. A probe that no longer gives the answer NVRTC
 * had, or a file whose mtime or ctime is in the clock tick NVRTC first looked at it or later
 * (a change then could keep every stamp), makes the record unfit: `why` says so (ccache's "too
 * new"). `start` (the compile's start) decides which stamps may stand for content later.
 * The files whose identity can matter (`#pragma once`) are numbered across the user's and the
 * toolkit's records; every file's when `spread` (gpujit__names_once) or a file read defines a
 * macro that names `once`; a source given as text is none.
 * @return 0 (`why` empty: `out` is the record), or GPUJIT_ENOMEM.
 */
int gpujit__module_deps_observed(gpujit__observed_deps *out, const gpujit__observed *o, const char *base,
                                 int64_t start, const char *const *sources, size_t count, bool spread, char *why,
                                 size_t why_size);
/** Whether a define, raw option or the prelude names `once`, or a source's `#define` does: a macro
 *  may then carry `#pragma once` into any file. */
bool gpujit__names_once(const gpujit_module_options *o, const gpujit_source *sources, size_t count);
void gpujit__observed_deps_free(gpujit__observed_deps *d);
/** CLOCK_REALTIME_COARSE in nanoseconds: the clock the kernel stamps files with. */
int64_t gpujit__deps_coarse_clock(void);
/** Whether a define, raw option, the prelude, a source or a file read names its own path
 *  (__FILE__, __BASE_FILE__, __FILE_NAME__, std::source_location, __builtin_FILE; also as pieces
 *  a token paste could join): its image then holds the base directory where no relocation
 *  reaches. */
const char *gpujit__names_own_path(const gpujit_module_options *o, const gpujit_source *sources, size_t count,
                                   const gpujit__observed_deps *d);

/** Whether `path` lies in the toolkit's include tree. */
bool gpujit__in_toolkit(const char *path);

/**
 * Whether what a build read can stand for its output next time: not when a raw NVRTC option
 * names a file the cache cannot track or cannot be read for certain, nor (unless
 * GPUJIT_CACHE_TIME_MACROS=1) when a source, header, define or the prelude uses __TIME__,
 * __DATE__ or __TIMESTAMP__. `why` says which, when not.
 */
bool gpujit__module_cacheable(const gpujit_module_options *o, const gpujit_source *sources, const char *const *paths,
                              size_t count, const gpujit__observed_deps *read, char *why, size_t why_size);

#endif
