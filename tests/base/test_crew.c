/* The helper threads of a check (base/crew.c): a task started on N helpers is run by each,
 * with its own number, named gpujit's, every signal blocked, each bound to a CPU other than the
 * starter's unless asked not to be; the join leaves no thread behind, as the kernel counts them
 * too; many threads start crews at once; a crew that cannot start a thread (or all it asked for)
 * runs on those it has, or none; a forked child starts crews of its own. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#include "base/crew.h"

typedef struct counting {
  gpujit__task task;
  int runs, bad;        /* atomic */
  unsigned long seen_k; /* atomic: a bit per helper number run */
  const gpujit__crew *crew; /* its `from`: the CPU the helpers are to avoid */
  int cpus;
  bool place;
} counting;

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
    if (c->place && (!one || CPU_ISSET(c->crew->from, &aff)))
      __atomic_add_fetch(&c->bad, 100, __ATOMIC_RELAXED); /* placed: bound to one CPU, not the starter's */
    if (!c->place && one)
      __atomic_add_fetch(&c->bad, 10000, __ATOMIC_RELAXED); /* unplaced: left free */
  }
  {
    char name[16];
    if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0 || strcmp(name, "gpujit-crew") != 0)
      __atomic_add_fetch(&c->bad, 1000000, __ATOMIC_RELAXED); /* named as gpujit's */
  }
  __atomic_or_fetch(&c->seen_k, 1UL << k, __ATOMIC_RELAXED);
  __atomic_add_fetch(&c->runs, 1, __ATOMIC_RELEASE);
}

static void counting_init(counting *c, bool place)
{
  cpu_set_t set;
  memset(c, 0, sizeof(*c));
  c->task.run = count_run;
  c->place = place;
  c->cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

/* A crew's join stops the starting of helpers (the caller is out of work by then): here the
 * caller has nothing to do, so it waits until `want` helpers ran the task (or 5 s) first. */
static void join_after(gpujit__crew *crew, counting *c, int want)
{
  for (int i = 0; i < 5000 && __atomic_load_n(&c->runs, __ATOMIC_ACQUIRE) < want; i++)
    usleep(1000);
  gpujit__crew_join(crew);
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

static void test_helpers__task_run_by_each_helper_asked(void **state)
{
  (void)state;
  for (int place = 1; place >= 0; place--) {
    counting c;
    gpujit__crew crew;
    counting_init(&c, place);
    c.crew = &crew;
    assert_true(gpujit__crew_start(&crew, &c.task, 3, place));
    join_after(&crew, &c, 3);
    assert_int_equal(c.runs, 3);
    assert_int_equal(c.seen_k, (1UL << 1) | (1UL << 2) | (1UL << 3)); /* numbers 1, 2, 3 */
    if (c.bad)
      fail_msg("place=%d: a signal unblocked, a wrong number, CPU binding or name (%d)", place, c.bad);
  }
}

/* Once joined, none of the crew's threads is left (counted by the kernel, not by the crew). */
static void test_helpers__join_leaves_no_thread(void **state)
{
  (void)state;
  assert_int_equal(threads_of_process(), 1);
  for (int i = 0; i < 20; i++) {
    counting c;
    gpujit__crew crew;
    counting_init(&c, i % 2);
    c.crew = &crew;
    assert_true(gpujit__crew_start(&crew, &c.task, 7, i % 2));
    join_after(&crew, &c, 7);
    assert_int_equal(threads_of_process(), 1);
    assert_int_equal(c.runs, 7);
  }
}

/* Another thread of the program holding the memory map for writing, over and over (mprotect of a
 * populated mapping): a helper's exit waits for it after its id is cleared. */
static int holding; /* atomic: 1 while the holder runs */
static void *hold_the_map(void *arg)
{
  size_t len = (size_t)32 << 20;
  char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  (void)arg;
  if (p == MAP_FAILED)
    return NULL;
  for (size_t i = 0; i < len; i += 4096)
    p[i] = 1;
  for (int r = 0; __atomic_load_n(&holding, __ATOMIC_RELAXED); r++)
    mprotect(p, len, r % 2 ? PROT_READ | PROT_WRITE : PROT_READ);
  munmap(p, len);
  return NULL;
}

/* Joined is gone as the kernel counts threads (/proc/self/task; Python's fork() warning reads the
 * same count): pthread_join returns when a thread's id is cleared, before the kernel lets it go,
 * and while another thread holds the memory map that gap was there after most joins. */
static void test_helpers__join_waits_until_the_kernel_let_go(void **state)
{
  pthread_t holder;
  int base, left = 0;
  (void)state;
  __atomic_store_n(&holding, 1, __ATOMIC_RELAXED);
  assert_int_equal(pthread_create(&holder, NULL, hold_the_map, NULL), 0);
  base = threads_of_process(); /* this thread and the holder */
  for (int i = 0; i < 200; i++) {
    counting c;
    gpujit__crew crew;
    counting_init(&c, false);
    c.crew = &crew;
    c.cpus = 0;
    assert_true(gpujit__crew_start(&crew, &c.task, 7, false));
    join_after(&crew, &c, 7);
    left += threads_of_process() != base;
  }
  __atomic_store_n(&holding, 0, __ATOMIC_RELAXED);
  pthread_join(holder, NULL);
  assert_int_equal(base, 2);
  assert_int_equal(left, 0);
}

static int failing_after; /* atomic: starts that succeed before they fail */
static int fail_later(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
  if (__atomic_sub_fetch(&failing_after, 1, __ATOMIC_RELAXED) < 0)
    return EAGAIN;
  return pthread_create(t, a, fn, arg);
}

/* No thread can be started: the start says so and nothing runs (the caller does the work); only
 * the first can: it runs alone, and the join joins it. */
static void test_helpers__cannot_start_threads(void **state)
{
  counting c;
  gpujit__crew crew;
  (void)state;
  gpujit__crew_create = fail_later;
  failing_after = 0;
  counting_init(&c, false);
  assert_false(gpujit__crew_start(&crew, &c.task, 3, false));
  gpujit__crew_join(&crew);
  assert_int_equal(c.runs, 0);
  failing_after = 1;
  counting_init(&c, false);
  assert_true(gpujit__crew_start(&crew, &c.task, 3, false));
  usleep(20000); /* time enough for the others, had they started */
  join_after(&crew, &c, 1);
  gpujit__crew_create = NULL;
  assert_int_equal(c.runs, 1);
  assert_int_equal(c.seen_k, 1UL << 1);
  assert_int_equal(threads_of_process(), 1);
}

typedef struct starter {
  int done, bad;
} starter;

static void *start_many(void *arg)
{
  starter *p = arg;
  for (int i = 0; i < 40; i++) {
    counting c;
    gpujit__crew crew;
    counting_init(&c, true);
    c.crew = &crew;
    c.cpus = 0; /* starters move between CPUs here: the binding is task_run_by_each_helper_asked's */
    if (!gpujit__crew_start(&crew, &c.task, 2, true))
      p->bad++;
    join_after(&crew, &c, 2);
    if (c.runs != 2 || c.bad)
      p->bad++;
    p->done++;
  }
  return NULL;
}

/* Eight threads start crews at once: each task is run by the helpers it asked for. */
static void test_helpers__many_starters(void **state)
{
  pthread_t t[8];
  starter p[8] = {{0}};
  (void)state;
  for (int i = 0; i < 8; i++)
    assert_int_equal(pthread_create(&t[i], NULL, start_many, &p[i]), 0);
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(p[i].done, 40);
    assert_int_equal(p[i].bad, 0);
  }
}

/* A slow task: its helpers are still running when another thread forks. */
static void slow_run(gpujit__task *t, int k)
{
  (void)k;
  usleep(20000);
  count_run(t, k);
}

static void *fork_now(void *arg)
{
  pid_t *pid = arg;
  if ((*pid = fork()) == 0) {
    counting c;
    gpujit__crew crew;
    counting_init(&c, true);
    c.crew = &crew;
    if (!gpujit__crew_start(&crew, &c.task, 2, true))
      _exit(2);
    join_after(&crew, &c, 2);
    _exit(c.runs == 2 && c.bad == 0 && threads_of_process() == 1 ? 0 : 3);
  }
  return NULL;
}

/* A child forked while a crew runs starts crews of its own, and has none of the parent's threads. */
static void test_helpers__forked_child(void **state)
{
  counting c;
  gpujit__crew crew;
  pthread_t t;
  pid_t pid = -1;
  int status;
  (void)state;
  counting_init(&c, true);
  c.crew = &crew;
  c.task.run = slow_run;
  assert_true(gpujit__crew_start(&crew, &c.task, 2, true));
  assert_int_equal(pthread_create(&t, NULL, fork_now, &pid), 0);
  pthread_join(t, NULL);
  join_after(&crew, &c, 2);
  assert_int_equal(c.runs, 2);
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_helpers__task_run_by_each_helper_asked),
      cmocka_unit_test(test_helpers__join_leaves_no_thread),
      cmocka_unit_test(test_helpers__join_waits_until_the_kernel_let_go),
      cmocka_unit_test(test_helpers__cannot_start_threads),
      cmocka_unit_test(test_helpers__many_starters),
      cmocka_unit_test(test_helpers__forked_child),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
