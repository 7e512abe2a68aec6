/* Helper threads for the cache's checks: a crew per check, started with it and joined before it
 * returns. */
#ifndef GPUJIT_BASE_CREW_H
#define GPUJIT_BASE_CREW_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#define GPUJIT__HELPERS_MAX 64 /* threads of one check at most, the caller's included */

enum { GPUJIT__HELPERS_PLACE = 2, GPUJIT__HELPERS_TIMELINE = 4 };

/** At most this many threads check one group, the caller's included: 8, and no more than the
 * CPUs the process may run on; and in *how, how: with four CPUs or more, helpers left where the
 * scheduler puts them; with fewer, each bound to a CPU other than the caller's (PLACE) — see
 * crew.c for why. $GPUJIT_CHECK_THREADS=N (1..64) sets the 8, and letters after it the rest —
 * the measuring knob of bench_hit's sweep: "b" bound, "u" unbound, "v" the check's timeline on
 * stderr (TIMELINE). */
size_t gpujit__helpers_threads(int *how);

/** Work that helpers share: each helper runs it once with its number k (from 1); it returns when
 * nothing is left for that helper to do. */
typedef struct gpujit__task gpujit__task;
struct gpujit__task {
  void (*run)(gpujit__task *t, int k);
};

/** The helpers of one check, from gpujit__helpers_start() to gpujit__helpers_join(); the caller's
 * to keep (zeroed) for that long. */
typedef struct gpujit__crew gpujit__crew;
typedef struct gpujit__seat { /* what a helper is started with */
  gpujit__crew *crew;
  int k;
} gpujit__seat;
struct gpujit__crew {
  gpujit__task *task;
  int wanted, from;     /* helpers asked for; the CPU the starter ran on */
  bool place;
  int stop;             /* atomic: the join has begun; no more are started */
  bool first;           /* the first helper was started (it starts and joins the others) */
  pthread_t first_tid;
  int others;           /* the others started: written by the first helper, read once it is joined */
  pthread_t other_tid[GPUJIT__HELPERS_MAX];
  gpujit__seat seat[GPUJIT__HELPERS_MAX];
  cpu_set_t allowed;
};

/** Start up to `n` helpers running `t` (each first on another CPU than the caller's unless
 * `!place`): the caller starts one, which starts the others. Returns at once; the caller goes on
 * with its own share, and must call gpujit__helpers_join() before `crew` or `t` goes. Returns
 * whether any was started: none where a thread cannot be started (RLIMIT_NPROC, memory) — the
 * caller then checks alone, and the others a first helper fails to start are not missed either,
 * as the work is shared by whoever takes it. */
bool gpujit__helpers_start(gpujit__crew *crew, gpujit__task *t, int n, bool place);

/** Wait for every helper of `crew` to end (the task must let them run out of work first: they
 * end when its run returns). No thread of the crew is left afterwards. */
void gpujit__helpers_join(gpujit__crew *crew);

/** For tests: what starts a thread (pthread_create where NULL); one that fails stands for a
 * process that may start no more. */
extern int (*gpujit__helpers_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

#endif
