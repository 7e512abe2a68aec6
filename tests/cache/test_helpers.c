/* The cache's pool of helper threads (cache/helpers.c): a task posted is run by as many helpers
 * as it asked for, each with its own number and a reference held; helpers run with every signal
 * blocked, each bound to a CPU other than the poster's unless asked not to be; many threads post
 * at once; helpers started ahead (warm) take the next task without new ones started; a forked
 * child has a pool of its own; idle helpers end. */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#include "cache/helpers.h"

typedef struct counting {
  gpujit__task task;
  int holds, runs, bad;    /* atomic */
  unsigned long seen_k;    /* atomic: a bit per helper number run */
  int poster_cpu, cpus;
  bool place;
  pthread_t threads[8];    /* under lock: the threads that ran it */
  int nthreads;
  pthread_mutex_t lock;
} counting;

static void count_hold(gpujit__task *t) { __atomic_add_fetch(&((counting *)t)->holds, 1, __ATOMIC_RELAXED); }

static void count_run(gpujit__task *t, int k)
{
  counting *c = (counting *)t;
  sigset_t now;
  cpu_set_t aff;
  pthread_sigmask(SIG_SETMASK, NULL, &now);
  if (!sigismember(&now, SIGINT) || !sigismember(&now, SIGTERM) || k < 1 || k > 60)
    __atomic_add_fetch(&c->bad, 1, __ATOMIC_RELAXED);
  if (pthread_getaffinity_np(pthread_self(), sizeof(aff), &aff) == 0 && c->cpus >= 2) {
    bool one = CPU_COUNT(&aff) == 1;
    if (c->place && (!one || CPU_ISSET(c->poster_cpu, &aff)))
      __atomic_add_fetch(&c->bad, 100, __ATOMIC_RELAXED); /* placed: bound to one CPU, not the poster's */
    if (!c->place && one)
      __atomic_add_fetch(&c->bad, 10000, __ATOMIC_RELAXED); /* unplaced: left free */
  }
  __atomic_or_fetch(&c->seen_k, 1UL << k, __ATOMIC_RELAXED);
  pthread_mutex_lock(&c->lock);
  if (c->nthreads < 8)
    c->threads[c->nthreads++] = pthread_self();
  pthread_mutex_unlock(&c->lock);
  __atomic_add_fetch(&c->runs, 1, __ATOMIC_RELEASE);
}

static void counting_init(counting *c, bool place)
{
  cpu_set_t set;
  memset(c, 0, sizeof(*c));
  c->task.hold = count_hold;
  c->task.run = count_run;
  c->place = place;
  c->poster_cpu = sched_getcpu();
  c->cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  pthread_mutex_init(&c->lock, NULL);
}

/* Until `want` helpers ran it (or 5 s); then withdrawn. */
static void wait_runs(counting *c, int want)
{
  for (int i = 0; i < 5000 && __atomic_load_n(&c->runs, __ATOMIC_ACQUIRE) < want; i++)
    usleep(1000);
  gpujit__helpers_withdraw(&c->task);
}

static int threads_of_process(void)
{
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  int n = 0;
  assert_non_null(d);
  while ((e = readdir(d)) != NULL)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* A helper's binding is made when it starts: a pool's helpers are bound alike (the setting is
 * the process's). So each setting is tried in a child of its own, whose pool is empty. */
static int post_three(bool place)
{
  counting c;
  counting_init(&c, place);
  if (gpujit__helpers_post(&c.task, 3, place) != 3)
    return 2;
  if (sched_getcpu() != c.poster_cpu)
    return 6; /* moved while it posted: the CPU the helpers must avoid is not known (tried again) */
  wait_runs(&c, 3);
  usleep(20000);
  if (c.runs != 3 || c.holds != 3)
    return 3;
  if (c.seen_k != ((1UL << 1) | (1UL << 2) | (1UL << 3))) /* numbers 1, 2, 3 */
    return 4;
  return c.bad ? 5 : 0; /* a signal unblocked, a wrong number or a wrong CPU binding */
}

static void test_helpers__task_run_by_each_helper_asked(void **state)
{
  (void)state;
  for (int place = 1; place >= 0; place--) {
    int status = 0;
    for (int attempt = 0; attempt < 20 && (attempt == 0 || WEXITSTATUS(status) == 6); attempt++) {
      pid_t pid = fork();
      assert_true(pid >= 0);
      if (pid == 0)
        _exit(post_three(place));
      assert_int_equal(waitpid(pid, &status, 0), pid);
      assert_true(WIFEXITED(status));
    }
    if (WEXITSTATUS(status) != 0)
      fail_msg("posted with place=%d: failure %d", place, WEXITSTATUS(status));
  }
}

/* Helpers started ahead take the next task: no thread is started for it. */
static void test_helpers__warm_helpers_take_the_task(void **state)
{
  counting c;
  int before;
  (void)state;
  gpujit__helpers_warm(2, true);
  for (int i = 0; i < 500 && threads_of_process() < 3; i++)
    usleep(1000);
  before = threads_of_process();
  assert_true(before >= 3);
  counting_init(&c, true);
  assert_int_equal(gpujit__helpers_post(&c.task, 2, true), 2);
  wait_runs(&c, 2);
  assert_int_equal(c.runs, 2);
  assert_int_equal(threads_of_process(), before);
  assert_int_equal(c.bad, 0);
}

/* A helper bound to the CPU its task's poster runs on (another thread of the program, say) moves
 * to another for it: the two would otherwise take turns on one CPU. */
static void *post_from_here(void *arg)
{
  counting *c = arg;
  c->poster_cpu = sched_getcpu();
  if (gpujit__helpers_post(&c->task, 1, true) == 1)
    wait_runs(c, 1);
  return NULL;
}

static int moved_off(void)
{
  cpu_set_t all, one;
  pthread_attr_t attr;
  pthread_t t;
  counting c;
  int from = sched_getcpu(), helper_cpu = -1;
  if (sched_getaffinity(0, sizeof(all), &all) != 0 || from < 0)
    return 2;
  for (int step = 1; step < CPU_SETSIZE && helper_cpu < 0; step++) /* where the helper is bound */
    if (CPU_ISSET((from + step) % CPU_SETSIZE, &all) && (from + step) % CPU_SETSIZE != from)
      helper_cpu = (from + step) % CPU_SETSIZE;
  gpujit__helpers_warm(1, true);
  for (int i = 0; i < 500 && threads_of_process() < 2; i++)
    usleep(1000);
  usleep(5000); /* spinning, then asleep: either way bound where it started */
  counting_init(&c, true);
  c.cpus = CPU_COUNT(&all); /* the poster is pinned; the helper may use all */
  CPU_ZERO(&one);
  CPU_SET(helper_cpu, &one);
  pthread_attr_init(&attr);
  pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
  if (pthread_create(&t, &attr, post_from_here, &c) != 0)
    return 3;
  pthread_join(t, NULL);
  if (c.runs != 1 || c.poster_cpu != helper_cpu)
    return 4;
  return c.bad ? 5 : 0;
}

static void test_helpers__bound_helper_moves_off_the_posters_cpu(void **state)
{
  cpu_set_t all;
  int status;
  pid_t pid;
  (void)state;
  if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2) {
    skip(); /* one CPU: nothing to move to */
    return;
  }
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(moved_off());
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) != 0)
    fail_msg("a bound helper given a task posted from its own CPU: failure %d (5: it stayed there)",
             WEXITSTATUS(status));
}

typedef struct poster {
  int done, bad;
} poster;

static void *post_many(void *arg)
{
  poster *p = arg;
  for (int i = 0; i < 40; i++) {
    counting c;
    int offered;
    counting_init(&c, true);
    c.cpus = 0; /* posters move between CPUs here: the binding is test_helpers__task_run_by_each_helper_asked's */
    offered = gpujit__helpers_post(&c.task, 2, true);
    if (offered)
      wait_runs(&c, 2);
    else
      gpujit__helpers_withdraw(&c.task);
    /* every helper that took it has run it (its reference held until then) */
    for (int k = 0; k < 5000 && __atomic_load_n(&c.runs, __ATOMIC_ACQUIRE) < __atomic_load_n(&c.holds, __ATOMIC_ACQUIRE); k++)
      usleep(100);
    if ((offered && c.runs != 2) || (!offered && c.runs != 0) || c.bad)
      p->bad++;
    p->done++;
  }
  return NULL;
}

/* Eight threads post at once, more than the pool's slots: each task is run by the helpers it was
 * offered to, or by none when there was no room. */
static void test_helpers__many_posters(void **state)
{
  pthread_t t[8];
  poster p[8] = {{0}};
  (void)state;
  for (int i = 0; i < 8; i++)
    assert_int_equal(pthread_create(&t[i], NULL, post_many, &p[i]), 0);
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(p[i].done, 40);
    assert_int_equal(p[i].bad, 0);
  }
}

/* A forked child starts with a pool of its own (the parent's helpers are not there). */
static void test_helpers__forked_child(void **state)
{
  pid_t pid;
  int status;
  (void)state;
  gpujit__helpers_warm(2, true);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    counting c;
    counting_init(&c, true);
    if (gpujit__helpers_post(&c.task, 2, true) != 2)
      _exit(2);
    wait_runs(&c, 2);
    _exit(c.runs == 2 && c.bad == 0 ? 0 : 3);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* Idle helpers end (half a second idle): no thread is left behind. */
static void test_helpers__idle_helpers_end(void **state)
{
  counting c;
  (void)state;
  counting_init(&c, false);
  assert_int_equal(gpujit__helpers_post(&c.task, 3, false), 3);
  wait_runs(&c, 3);
  assert_true(threads_of_process() > 1);
  for (int i = 0; i < 3000 && threads_of_process() > 1; i++)
    usleep(1000);
  assert_int_equal(threads_of_process(), 1);
}

static double cpu_ms(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* In a child with an empty pool: helpers started for a task (not ahead of one) run it and then
 * sleep — none spins for the next (a short process's helper spinning as it exits delayed the
 * exit), and none started after the task was withdrawn spins for it. */
static int run_then_sleep(void)
{
  counting c, late;
  double before;
  counting_init(&c, false);
  counting_init(&late, false);
  if (gpujit__helpers_post(&c.task, 3, false) != 3)
    return 2;
  wait_runs(&c, 3);
  before = cpu_ms();
  if (c.runs != 3)
    return 3;
  gpujit__helpers_post(&late.task, 2, false);
  gpujit__helpers_withdraw(&late.task); /* withdrawn before the helpers started for it run */
  usleep(30000);
  /* five helpers spinning their millisecond each cost 2-5 ms; two started and put to sleep, ~0.2 */
  return cpu_ms() - before < 1.0 ? 0 : 4;
}

static void test_helpers__helpers_for_a_task_sleep_after_it(void **state)
{
  int status;
  pid_t pid = fork();
  (void)state;
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(run_then_sleep());
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) != 0)
    fail_msg("failure %d (4: the idle helpers used CPU time: spinning)", WEXITSTATUS(status));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_helpers__task_run_by_each_helper_asked),
      cmocka_unit_test(test_helpers__warm_helpers_take_the_task),
      cmocka_unit_test(test_helpers__bound_helper_moves_off_the_posters_cpu),
      cmocka_unit_test(test_helpers__many_posters),
      cmocka_unit_test(test_helpers__forked_child),
      cmocka_unit_test(test_helpers__idle_helpers_end),
      cmocka_unit_test(test_helpers__helpers_for_a_task_sleep_after_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
