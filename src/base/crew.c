/* A crew of threads sharing one task with the thread that starts it.
 *
 * Design rules (the figures behind them are in docs/cache-format.md, "Helper threads"):
 *  - the crew is the task's own: started with it and joined before the starter returns, so no
 *    thread outlives the call that wanted it — a pool kept between calls made Python warn at the
 *    program's next fork, left a forked child a lock to patch up, and took room under RLIMIT_NPROC
 *    that the program's own threads then lacked;
 *  - a thread that cannot be started is no error: the work is shared by whoever takes it, the
 *    starter included, so fewer threads only make it slower;
 *  - the starter starts one helper, which starts the others and joins them: the starter pays for
 *    one thread start, and a join that begins (the starter out of work) stops the starting;
 *  - where the helpers run is the caller's choice (`place`): each bound to a CPU other than the
 *    starter's, or left to the scheduler. The policy — how many, and placed or not — belongs to
 *    the user of the crew (cache/records/check_threads.c);
 *  - every signal is blocked on the helpers: none of the program's is handled on a thread of ours;
 *  - joined is not yet gone: pthread_join returns when the kernel clears the thread's id, early in
 *    its exit, and the kernel counts the thread (/proc/self/task, /proc/self/stat) until it is
 *    released, microseconds later (longer where another thread holds the memory map: the exit
 *    waits for it). A program that forks right after a call saw it (Python 3.12 warns at fork()
 *    while the kernel counts another thread; gpujit's fork test failed after a hit on a 16-core
 *    machine): 1 join of 7 helpers in 1,000 to 10,000 on a 2-core machine, and most joins while
 *    another thread mprotect()s. The join waits for each helper's id to be gone (tgkill with
 *    signal 0 answers ESRCH).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/crew.h"

int (*gpujit__crew_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

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
  crew->seat[k] = (gpujit__seat){crew, k, 0};
  rc = (gpujit__crew_create ? gpujit__crew_create : pthread_create)(tid, &attr, fn, &crew->seat[k]);
  pthread_attr_destroy(&attr);
  return rc == 0;
}

/* A helper begins: its id noted for the join (read once it is joined), its name gpujit's (what
 * top -H, a debugger and /proc/self/task/N/comm show: a thread seen there is known for ours). */
static void seated(gpujit__seat *s)
{
  s->tid = (pid_t)syscall(SYS_gettid);
  pthread_setname_np(pthread_self(), "gpujit-crew");
}

/* Helper k >= 2: its share. */
static void *other_main(void *arg)
{
  gpujit__seat *s = arg;
  seated(s);
  s->crew->task->run(s->crew->task, s->k);
  return NULL;
}

/* Helper 1: starts the others (unless the join has begun), does its share, joins them. */
static void *first_main(void *arg)
{
  gpujit__crew *crew = ((gpujit__seat *)arg)->crew;
  int n = 0;
  seated(arg);
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

bool gpujit__crew_start(gpujit__crew *crew, gpujit__task *t, int n, bool place)
{
  sigset_t all, old;
  memset(crew, 0, sizeof(*crew));
  crew->task = t;
  crew->wanted = n < GPUJIT__CREW_MAX ? n : GPUJIT__CREW_MAX - 1;
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

/* Until the kernel has released the joined helpers (their ids no longer found), or `GIVE_UP_NS`:
 * an exiting thread that a tracer must reap stays found. Microseconds as a rule; milliseconds
 * where another thread holds the process's memory map for writing (an exiting thread waits for
 * it after its id is cleared). */
#define GIVE_UP_NS 100000000L

static void wait_released(gpujit__crew *crew)
{
  pid_t self = getpid();
  struct timespec t0, now;
  bool timed = false;
  for (int k = 1; k <= crew->wanted; k++)
    while (crew->seat[k].tid > 0 && syscall(SYS_tgkill, self, crew->seat[k].tid, 0) == 0) {
      if (!timed)
        timed = clock_gettime(CLOCK_MONOTONIC, &t0) == 0;
      if (clock_gettime(CLOCK_MONOTONIC, &now) != 0 ||
          (now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) > GIVE_UP_NS)
        return;
      sched_yield();
    }
}

void gpujit__crew_join(gpujit__crew *crew)
{
  __atomic_store_n(&crew->stop, 1, __ATOMIC_RELEASE);
  if (crew->first) {
    pthread_join(crew->first_tid, NULL); /* the first joined the others: every seat's id is written */
    wait_released(crew);
  }
  crew->first = false;
}

size_t gpujit__crew_cpus(void)
{
  cpu_set_t set;
  long n;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return (size_t)CPU_COUNT(&set);
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (size_t)n : 1;
}
