/* Helper threads for the cache's checks: a crew per check.
 *
 * A check of a toolkit group is hundreds of stats that do not wait on each other; helpers share
 * them with the caller's thread. The helpers are the check's own: started with it (or with the
 * check a build begins ahead of its lookup, cache/records/head_start.c) and joined before the lookup returns.
 * A pool kept between lookups started fewer threads, but its threads outlived the call that
 * wanted them: Python 3.12+ warned at the program's next os.fork() that the process was
 * multi-threaded, a child forked while they held the pool's lock had to be patched up, and under
 * RLIMIT_NPROC the program's own threads failed to start for want of the room they took. So none
 * is left once a lookup returns, and a check that cannot start one runs on the caller's thread.
 * Starting a thread costs its starter 20-40 us of system calls on the virtual machines measured
 * (a fresh process's first one, 60-110 us), and the new thread runs 50-100 us later — as long as
 * the check itself on eight threads. So:
 *  - the caller starts one helper, which starts the others (and joins them): the caller pays for
 *    one start, and a join that begins (the caller out of work) stops the starting;
 *  - with fewer than MANY_CPUS, each helper is bound to a CPU other than its starter's: the
 *    scheduler there ran a new thread on the CPU of the thread that started it, and the two took
 *    turns (the whole check on one CPU while the other stood idle: 0.84-1.0 ms against 0.55
 *    bound). With many CPUs the scheduler finds an idle one, and an unbound helper was as fast or
 *    faster (2.06 ms against 2.17).
 * Every signal is blocked on the helpers: none of the program's is handled on a thread of ours. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/crew.h"

#define MANY_CPUS 4 /* from this many, helpers go where the scheduler puts them */

int (*gpujit__helpers_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* The i-th CPU (from 1) of those allowed, after `from` and other than it; -1: none. */
static int cpu_after(const cpu_set_t *allowed, int from, int i)
{
  int n = CPU_COUNT(allowed) - (CPU_ISSET(from, allowed) ? 1 : 0);
  if (n <= 0)
    return -1;
  i = (i - 1) % n + 1;
  for (int step = 1; step < CPU_SETSIZE; step++) {
    int c = (from + step) % CPU_SETSIZE;
    if (c != from && CPU_ISSET(c, allowed) && --i == 0)
      return c;
  }
  return -1;
}

/* Start helper number `k` of `crew` (bound as the crew says) running `fn`; whether it started. */
static bool start_one(gpujit__crew *crew, int k, void *(*fn)(void *), pthread_t *tid)
{
  pthread_attr_t attr;
  int cpu, rc;
  if (pthread_attr_init(&attr) != 0)
    return false;
  if (crew->place && (cpu = cpu_after(&crew->allowed, crew->from, k)) >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
  }
  crew->seat[k] = (gpujit__seat){crew, k};
  rc = (gpujit__helpers_create ? gpujit__helpers_create : pthread_create)(tid, &attr, fn, &crew->seat[k]);
  pthread_attr_destroy(&attr);
  return rc == 0;
}

/* Helper k >= 2: its share. */
static void *other_main(void *arg)
{
  gpujit__seat *s = arg;
  s->crew->task->run(s->crew->task, s->k);
  return NULL;
}

/* Helper 1: starts the others (unless the join has begun), does its share, joins them. */
static void *first_main(void *arg)
{
  gpujit__crew *crew = ((gpujit__seat *)arg)->crew;
  int n = 0;
  for (int k = 2; k <= crew->wanted && !__atomic_load_n(&crew->stop, __ATOMIC_ACQUIRE); k++) {
    pthread_t tid;
    if (!start_one(crew, k, other_main, &tid))
      break; /* no room for more: those started share the work */
    crew->other_tid[n++] = tid;
  }
  crew->others = n;
  crew->task->run(crew->task, 1);
  for (int i = 0; i < n; i++)
    pthread_join(crew->other_tid[i], NULL);
  return NULL;
}

bool gpujit__helpers_start(gpujit__crew *crew, gpujit__task *t, int n, bool place)
{
  sigset_t all, old;
  memset(crew, 0, sizeof(*crew));
  crew->task = t;
  crew->wanted = n < GPUJIT__HELPERS_MAX ? n : GPUJIT__HELPERS_MAX - 1;
  crew->from = sched_getcpu();
  crew->place = place && crew->from >= 0 && sched_getaffinity(0, sizeof(crew->allowed), &crew->allowed) == 0 &&
                CPU_COUNT(&crew->allowed) >= 2;
  if (n <= 0)
    return false;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited by the helpers: every signal blocked */
  crew->first = start_one(crew, 1, first_main, &crew->first_tid);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return crew->first;
}

void gpujit__helpers_join(gpujit__crew *crew)
{
  __atomic_store_n(&crew->stop, 1, __ATOMIC_RELEASE);
  if (crew->first)
    pthread_join(crew->first_tid, NULL);
  crew->first = false;
}

static size_t cpus_allowed(void)
{
  cpu_set_t set;
  long n;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return (size_t)CPU_COUNT(&set);
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (size_t)n : 1;
}

size_t gpujit__helpers_threads(int *how)
{
  static size_t setting; /* the cap times 8, plus how; worked out once */
  size_t got = __atomic_load_n(&setting, __ATOMIC_RELAXED), cap, cpus;
  if (!got) {
    const char *e = getenv("GPUJIT_CHECK_THREADS");
    char *end = NULL;
    long v = e && *e ? strtol(e, &end, 10) : 0;
    bool set = v >= 1 && v <= GPUJIT__HELPERS_MAX, many = cpus_allowed() >= MANY_CPUS;
    size_t h = many ? 0 : GPUJIT__HELPERS_PLACE;
    if (set && (strchr(end, 'b') || strchr(end, 'u')))
      h = strchr(end, 'b') ? GPUJIT__HELPERS_PLACE : 0;
    if (set && strchr(end, 'v'))
      h |= GPUJIT__HELPERS_TIMELINE;
    got = (set ? (size_t)v : 8) * 8 + h + 1; /* + 1: never 0 once worked out */
    __atomic_store_n(&setting, got, __ATOMIC_RELAXED);
  }
  *how = (int)(got & 6);
  cpus = cpus_allowed();
  cap = got / 8;
  return cap < cpus ? cap : cpus;
}
