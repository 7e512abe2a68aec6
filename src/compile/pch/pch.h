/* NVRTC's automatic precompiled headers, managed: a private PCH directory per process, which
 * include blocks have a PCH in this process, the PCH heap sized to what NVRTC asks, and NVRTC's
 * PCH messages turned into a status and a reason and taken out of the user's log. */
#ifndef GPUJIT_COMPILE_PCH_PCH_H
#define GPUJIT_COMPILE_PCH_PCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "gpujit/module.h"

/** One compile's PCH request (in) and outcome (out). */
typedef struct gpujit__pch {
  gpujit_pch_mode mode;   /* in */
  bool more_expected;     /* in: more modules of this include block will follow in this process */
  /* in: every file the compile reads besides the source (absolute), asked only when a PCH is to
   * be made or used — NVRTC never checks whether a PCH's headers changed, gpujit does, by these.
   * A NULL answer (or no function): unknown, so no PCH. */
  const char *const *(*headers)(void *ctx, size_t *count);
  void *headers_ctx;
  struct gpujit__pch_stamps *stamps; /* private: the headers as they were before the compile */
  gpujit_pch_status status; /* out */
  char reason[200];       /* out: why, or "" */
  char file[4096];        /* out: the PCH file a compile made */
  size_t heap_bytes;      /* out: the PCH heap after this compile (0: unknown) */
  bool retried;           /* out: compiled a second time after growing the heap */
  /* in/out: what this compile was seen to probe (compile/observe/observe.h), set before
   * gpujit__pch_after(): a PCH made keeps a copy, and a compile that used one gets the probes of
   * the compiles that made every PCH it could have taken — what NVRTC skipped reading */
  struct gpujit__observed *observed;
  const char *source; /* in, with `observed`: the compile's program name, which no PCH depends on */
} gpujit__pch;

/** What identifies a source's PCH: its leading block of directives and comments (which must
 *  hold an #include), the prelude, and the flags — of --fdevice-time-trace only whether it is
 *  there (NVRTC refuses a PCH made without a trace for a traced compile, but not for another
 *  trace file). */
typedef struct gpujit__pch_block {
  uint64_t key;
  bool has_include;
} gpujit__pch_block;

void gpujit__pch_block_of(gpujit__pch_block *out, const char *source, size_t size, const char *prelude,
                          const gpujit__strvec *flags);

/** Decide for this compile and add NVRTC's PCH flags to `flags` when the PCH is on.
 *  @return true when PCH flags were added. */
bool gpujit__pch_plan(gpujit__pch *pch, const gpujit__pch_block *block, gpujit__strvec *flags, int *err);

/** After the compile: read the outcome from NVRTC (`prog`) and the log, and take NVRTC's PCH
 *  messages out of the log. @return true when the compile should run again (heap grown). */
bool gpujit__pch_after(gpujit__pch *pch, const gpujit__pch_block *block, void *prog, gpujit__buf *log);

/** Free what a plan holds (done by gpujit__pch_after(); for paths that never compile). */
void gpujit__pch_release(gpujit__pch *pch);

/** The process's private PCH directory (created on first use; stale ones of dead processes
 *  are removed then). NULL with an error set when it cannot be made. */
const char *gpujit__pch_dir(void);

/** The private PCH directory if this process made it, else NULL (makes nothing). */
const char *gpujit__pch_dir_if_made(void);

/** Take NVRTC's PCH messages out of a log; exposed for tests. Fills status/reason hints. */
void gpujit__pch_strip_log(gpujit__buf *log, gpujit__pch *pch);

#endif
