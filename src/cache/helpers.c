/* Helper threads for the cache's checks: one small pool per process.
 *
 * A check of a toolkit group is hundreds of stats that do not wait on each other; helpers share
 * them with the caller's thread. Starting a thread costs its starter 20-40 us of system calls on
 * the virtual machines measured (a fresh process's first one, 60-110 us), and the new thread runs
 * 50-100 us later — as long as the check itself on eight threads. So:
 *  - helpers are kept: one that finds no work waits for the next (IDLE_MS), so that a process
 *    that looks up many modules (Python, a project build, a server's worker) starts them once;
 *  - the caller starts one helper, which starts the others: the caller pays for one start;
 *  - with MANY_CPUS or more, a lookup that expects a group (its source includes headers) warms
 *    the pool before it hashes its request, and a helper just started spins for work for SPIN_US
 *    before it sleeps: waking seven sleeping threads on idle CPUs of a virtual machine took 40-50
 *    us each, one after another, and a warmed lookup posts within that time (bench_hit on the
 *    16-CPU GPU host: the check 0.18-0.30 ms against 0.38-0.46 started with it, the hit
 *    2.04-2.17 ms against 2.17-2.36). With two CPUs a helper started ahead slowed the hit it was
 *    for (2.33 ms against 2.20): the lookup's own work wants the other CPU then;
 *  - with fewer CPUs, each helper is bound to a CPU other than its starter's, and moved off a
 *    poster's CPU when it takes its task: the scheduler there ran a new thread, or one it woke,
 *    on the CPU of the thread that started or woke it, and the two took turns (the whole check on
 *    one CPU while the other stood idle: 0.84-1.0 ms against 0.55 bound). With many CPUs the
 *    scheduler finds an idle one, and an unbound helper was as fast or faster (2.06 ms against
 *    2.17). Where its CPU is busy, a helper is late, and the caller checks the chunks it has not
 *    taken.
 * Every signal is blocked on the helpers (none of the program's is handled on a thread of ours),
 * and a forked child starts with an empty pool. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "cache/helpers.h"

#define SLOTS 4       /* tasks posted at once (threads of one process checking together) */
#define MAX_ALIVE 64  /* helpers at most */
#define IDLE_MS 500   /* a helper with nothing to do for this long ends */
#define SPIN_US 1000  /* a helper just started looks for work this long awake */
#define MANY_CPUS 4   /* from this many, helpers start ahead and go where the scheduler puts them */

typedef struct slot {
  gpujit__task *t;
  int wanted, given;
  int from; /* the CPU the poster ran on */
} slot;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t work; /* a task was posted */
  slot slot[SLOTS];
  int alive, busy, idle; /* started and not ended; running a task; waiting for one */
  unsigned posts;        /* atomic: tasks posted, ever (what a spinning helper watches) */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* What a starting helper is told: where its starter ran, the CPUs the starter may run on, and
 * how many more helpers it starts itself. */
typedef struct start {
  bool place;
  bool spin; /* started ahead of a check (warm): look for its task awake a while */
  int from, more;
  int cpu; /* the CPU it is bound to; -1 none */
  cpu_set_t allowed;
} start;

static void at_fork_prepare(void) { pthread_mutex_lock(&pool.lock); }
static void at_fork_parent(void) { pthread_mutex_unlock(&pool.lock); }

static void init_work(void)
{
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&pool.work, &a);
  pthread_condattr_destroy(&a);
}

/* The child has the forking thread alone: no helper, no task of the parent's. */
static void at_fork_child(void)
{
  pthread_mutex_init(&pool.lock, NULL);
  init_work();
  memset(pool.slot, 0, sizeof(pool.slot));
  pool.alive = pool.busy = pool.idle = 0;
}

static void init(void)
{
  init_work();
  pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
}

/* A posted task with a share left: taken (a reference held for the caller). Under the lock. */
static gpujit__task *take(int *k, int *from)
{
  for (int i = 0; i < SLOTS; i++)
    if (pool.slot[i].t && pool.slot[i].given < pool.slot[i].wanted) {
      *k = ++pool.slot[i].given;
      *from = pool.slot[i].from;
      pool.slot[i].t->hold(pool.slot[i].t);
      return pool.slot[i].t;
    }
  return NULL;
}

static void start_helpers(const start *s, int n, int pos);

static int64_t mono_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Until a task is posted after `seen` posts, or SPIN_US: whether one was. Called unlocked. */
static bool spin(unsigned seen)
{
  int64_t until = mono_us() + SPIN_US;
  for (unsigned i = 1;; i++) {
    if (__atomic_load_n(&pool.posts, __ATOMIC_ACQUIRE) != seen)
      return true;
    if (i % 64 == 0 && mono_us() > until)
      return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

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

/* A bound helper given the task of a poster on its own CPU (another thread of the program, or the
 * same one moved since the helper started): bound to another, or the two would take turns. */
static void move_off(int *bound, const cpu_set_t *allowed, int from, int k)
{
  int cpu = *bound >= 0 && *bound == from ? cpu_after(allowed, from, k) : -1;
  cpu_set_t one;
  if (cpu < 0)
    return;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0)
    *bound = cpu;
}

static void *helper_main(void *arg)
{
  start *s = arg;
  struct timespec until;
  int k, from, rc = 0, bound = s->cpu;
  bool spun = !s->spin; /* one started for a task posted and finding none left sleeps at once */
  cpu_set_t allowed = s->allowed;
  if (s->more > 0)
    start_helpers(s, s->more, 2);
  free(s);
  pthread_mutex_lock(&pool.lock);
  for (;;) {
    gpujit__task *t = take(&k, &from);
    unsigned seen;
    if (t) {
      pool.busy++;
      pthread_mutex_unlock(&pool.lock);
      move_off(&bound, &allowed, from, k);
      t->run(t, k);
      pthread_mutex_lock(&pool.lock);
      pool.busy--;
      rc = 0;
      spun = true; /* after a task, sleep: a thread spinning as a short process exits delays its exit */
      continue;
    }
    if (rc == ETIMEDOUT)
      break;
    if (!spun) { /* just started, ahead of a check: its task is likely soon, so no sleep, no wake-up */
      spun = true;
      seen = pool.posts;
      pthread_mutex_unlock(&pool.lock);
      spin(seen);
      pthread_mutex_lock(&pool.lock);
      continue;
    }
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += (IDLE_MS % 1000) * 1000000L;
    until.tv_sec += IDLE_MS / 1000 + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pool.idle++;
    rc = pthread_cond_timedwait(&pool.work, &pool.lock, &until);
    pool.idle--;
  }
  pool.alive--;
  pthread_mutex_unlock(&pool.lock);
  return NULL;
}

/* Start `n` helpers as `s` says, the i-th first on the (pos+i-1)-th CPU after the one `s` was
 * started from; with every signal blocked, which they inherit. */
static void start_helpers(const start *s, int n, int pos)
{
  sigset_t all, old;
  int lost = 0;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (int i = 1; i <= n; i++) {
    start *c = malloc(sizeof(*c));
    pthread_attr_t attr;
    pthread_t tid;
    int cpu;
    if (!c || pthread_attr_init(&attr) != 0) {
      free(c);
      lost++;
      continue;
    }
    *c = *s;
    c->more = pos == 1 && i == 1 ? s->more : 0; /* the first starts the rest */
    c->cpu = -1;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (c->place && (cpu = cpu_after(&c->allowed, c->from, pos + i - 1)) >= 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      if (pthread_attr_setaffinity_np(&attr, sizeof(one), &one) == 0)
        c->cpu = cpu;
    }
    if (pthread_create(&tid, &attr, helper_main, c) != 0) {
      free(c);
      lost++;
    }
    pthread_attr_destroy(&attr);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (lost) {
    pthread_mutex_lock(&pool.lock);
    pool.alive -= lost;
    pthread_mutex_unlock(&pool.lock);
  }
}

/* Start `n` helpers (counted alive already): the caller starts one, which starts the others. */
static void grow(int n, bool place, bool spin)
{
  start s = {.place = place, .spin = spin, .from = sched_getcpu(), .more = n - 1};
  if (n <= 0)
    return;
  if (s.place && (s.from < 0 || sched_getaffinity(0, sizeof(s.allowed), &s.allowed) != 0 || CPU_COUNT(&s.allowed) < 2))
    s.place = false;
  start_helpers(&s, 1, 1);
}

/* How many more helpers `want` calls for, counted alive at once. Under the lock. */
static int reserve(int want)
{
  int n = want < MAX_ALIVE - pool.alive ? want : MAX_ALIVE - pool.alive;
  n = n > 0 ? n : 0;
  pool.alive += n;
  return n;
}

int gpujit__helpers_post(gpujit__task *t, int n, bool place)
{
  int i, more;
  if (n <= 0)
    return 0;
  pthread_once(&once, init);
  pthread_mutex_lock(&pool.lock);
  for (i = 0; i < SLOTS && pool.slot[i].t; i++)
    ;
  if (i == SLOTS) {
    pthread_mutex_unlock(&pool.lock);
    return 0;
  }
  pool.slot[i] = (slot){t, n, 0, sched_getcpu()};
  __atomic_add_fetch(&pool.posts, 1, __ATOMIC_RELEASE);
  /* helpers alive and not at work take it (those still starting, too, once started) */
  more = reserve(n - (pool.alive - pool.busy));
  if (pool.idle)
    pthread_cond_broadcast(&pool.work);
  pthread_mutex_unlock(&pool.lock);
  grow(more, place, false);
  return n;
}

void gpujit__helpers_withdraw(gpujit__task *t)
{
  pthread_mutex_lock(&pool.lock);
  for (int i = 0; i < SLOTS; i++)
    if (pool.slot[i].t == t)
      pool.slot[i].t = NULL;
  pthread_mutex_unlock(&pool.lock);
}

void gpujit__helpers_warm(int n, bool place)
{
  int more;
  pthread_once(&once, init);
  pthread_mutex_lock(&pool.lock);
  more = reserve(n - pool.alive);
  pthread_mutex_unlock(&pool.lock);
  grow(more, place, true);
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
    size_t h = many ? GPUJIT__HELPERS_WARM : GPUJIT__HELPERS_PLACE;
    if (set && (strchr(end, 'w') || strchr(end, 'c')))
      h = (h & ~(size_t)GPUJIT__HELPERS_WARM) | (strchr(end, 'w') ? GPUJIT__HELPERS_WARM : 0);
    if (set && (strchr(end, 'b') || strchr(end, 'u')))
      h = (h & ~(size_t)GPUJIT__HELPERS_PLACE) | (strchr(end, 'b') ? GPUJIT__HELPERS_PLACE : 0);
    if (set && strchr(end, 'v'))
      h |= GPUJIT__HELPERS_TIMELINE;
    got = (set ? (size_t)v : 8) * 8 + h;
    __atomic_store_n(&setting, got, __ATOMIC_RELAXED);
  }
  *how = (int)(got & 7);
  cpus = cpus_allowed();
  cap = got / 8;
  return cap < cpus ? cap : cpus;
}
