/* How a dependency group's check uses threads: how many, and where they run — the policy over the
 * crew of base/crew.c, which is the mechanism. */
#ifndef GPUJIT_CACHE_RECORDS_CHECK_THREADS_H
#define GPUJIT_CACHE_RECORDS_CHECK_THREADS_H

#include <stdbool.h>
#include <stddef.h>

/** How one check runs: at most `threads` threads (the caller's included); `place`: each helper
 *  bound to a CPU other than the caller's; `timeline`: the check's timeline logged (measuring). */
typedef struct gpujit__check_threads {
  size_t threads;
  bool place, timeline;
  bool ahead; /* a build's check of the group its sources used last time begun ahead (head start) */
  bool watch; /* a group checked again in the process is watched (cache/records/group_watch.c) */
} gpujit__check_threads;

/** The policy, worked out once per process: at most 8 threads, no more than the CPUs the process
 *  may run on; with four CPUs or more the helpers go where the scheduler puts them, with fewer each
 *  is bound to a CPU other than the caller's (docs/cache-format.md says why).
 *  $GPUJIT_CHECK_THREADS=N (1..64) sets the 8; $GPUJIT_BENCH_CHECK, the measuring switch of
 *  bench_hit's sweep, holds letters: "b" bound, "u" unbound, "v" the timeline, "h" no head start
 *  (bench/bench_head_start.py measures what it gives), "w" no watch of the process's own. */
gpujit__check_threads gpujit__check_threads_get(void);

#endif
