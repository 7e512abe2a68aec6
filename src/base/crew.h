/* A crew of threads sharing one task with the thread that starts it: started with the task and
 * joined before it returns, none left over; where they run is the starter's to say. */
#ifndef GPUJIT_BASE_CREW_H
#define GPUJIT_BASE_CREW_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define GPUJIT__CREW_MAX 64 /* threads of one task at most, the starter's included */

/** The CPUs this process may run on (at least 1). */
size_t gpujit__crew_cpus(void);

/** Work that a crew shares: each helper runs it once with its number k (from 1); it returns when
 * nothing is left for that helper to do. */
typedef struct gpujit__task gpujit__task;
struct gpujit__task {
  void (*run)(gpujit__task *t, int k);
};

/** The helpers of one task, from gpujit__crew_start() to gpujit__crew_join(); the caller's
 * to keep (zeroed) for that long. */
typedef struct gpujit__crew gpujit__crew;
typedef struct gpujit__seat { /* what a helper is started with */
  gpujit__crew *crew;
  int k;
  pid_t tid; /* the helper's, written by it when it starts (0: never started) */
} gpujit__seat;
struct gpujit__crew {
  gpujit__task *task;
  int wanted, from;     /* helpers asked for; the CPU the starter ran on */
  bool place;
  int stop;             /* atomic: the join has begun; no more are started */
  bool first;           /* the first helper was started (it starts and joins the others) */
  pthread_t first_tid;
  int others;           /* the others started: written by the first helper, read once it is joined */
  pthread_t other_tid[GPUJIT__CREW_MAX];
  gpujit__seat seat[GPUJIT__CREW_MAX];
  cpu_set_t allowed;
};

/** Start up to `n` helpers running `t` (each first on another CPU than the caller's unless
 * `!place`): the caller starts one, which starts the others. Returns at once; the caller goes on
 * with its own share, and must call gpujit__crew_join() before `crew` or `t` goes. Returns
 * whether any was started: none where a thread cannot be started (RLIMIT_NPROC, memory) — the
 * caller then checks alone, and the others a first helper fails to start are not missed either,
 * as the work is shared by whoever takes it. */
bool gpujit__crew_start(gpujit__crew *crew, gpujit__task *t, int n, bool place);

/** Wait for every helper of `crew` to end (the task must let them run out of work first: they
 * end when its run returns). No thread of the crew is left afterwards, as the kernel counts
 * threads too (/proc/self/task, the count Python's fork() warning reads): a joined thread is
 * waited for until the kernel has let it go (microseconds as a rule; after 100 ms, as under a
 * debugger whose exited threads wait for it, the join gives up). */
void gpujit__crew_join(gpujit__crew *crew);

/** For tests: what starts a thread (pthread_create where NULL); one that fails stands for a
 * process that may start no more. */
extern int (*gpujit__crew_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

#endif
