/* Helper threads for the cache's checks: one small pool per process. */
#ifndef GPUJIT_CACHE_HELPERS_H
#define GPUJIT_CACHE_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#define GPUJIT__HELPERS_MAX 64 /* threads of one check at most, the caller's included */

enum { GPUJIT__HELPERS_WARM = 1, GPUJIT__HELPERS_PLACE = 2, GPUJIT__HELPERS_TIMELINE = 4 };

/** At most this many threads check one group, the caller's included: 8, and no more than the
 * CPUs the process may run on; and in *how, how: with four CPUs or more, helpers started ahead
 * of the check (WARM) and left where the scheduler puts them; with fewer, started with the check
 * and each bound to a CPU other than the caller's (PLACE) — see helpers.c for why.
 * $GPUJIT_CHECK_THREADS=N (1..64) sets the 8, and letters after it the rest — the measuring knob
 * of bench_hit's sweep: "w" warm, "c" cold (not warm), "b" bound, "u" unbound, "v" the check's
 * timeline on stderr (TIMELINE). */
size_t gpujit__helpers_threads(int *how);

/** Work that helpers share: each helper that takes it is given a reference (hold, called under
 * the pool's lock) and runs it with its number k (from 1, in the order they took it); run ends
 * with the release of that reference. */
typedef struct gpujit__task gpujit__task;
struct gpujit__task {
  void (*hold)(gpujit__task *t);
  void (*run)(gpujit__task *t, int k);
};

/** Offer `t` to up to `n` helpers, now: idle ones are woken, and helpers are started for those
 * the pool lacks (each first on another CPU than the caller's unless `!place`). Returns at once;
 * the caller goes on with its own share. Returns how many helpers it was offered to (0: the pool
 * had no room — the caller checks alone). */
int gpujit__helpers_post(gpujit__task *t, int n, bool place);

/** No helper takes `t` from now on; those that took it keep their reference until done. */
void gpujit__helpers_withdraw(gpujit__task *t);

/** Start helpers so that `n` are alive, ahead of a check that will want them (a lookup whose
 * source includes headers): by the time the check posts its task, they are running. */
void gpujit__helpers_warm(int n, bool place);

#endif
