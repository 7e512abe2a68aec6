/*
 * What `gpujit profile` costs a loop of steps outside the steps it records, on this machine
 * without a GPU: bench/step_storm runs against a stand-in libcuda.so.1 whose launches cost next to
 * nothing (tests/fakes/fake_launch_cuda.c) and a stand-in CUPTI (tests/profile/fake_cupti.c), so
 * what gpujit's injection adds to each launch and each step is most of what is measured. Three
 * arms, in turning order each round, all pinned to one CPU (the bench pins itself; its children
 * inherit it, as steps.py's taskset does on the GPU machine): the plain program,
 * `gpujit profile -q --schedule wait=900,warmup=1,active=10,repeat=1` and `gpujit profile -q
 * --no-cupti`. From the program's own clock (its "seconds" and each step's wall time):
 *   - the whole loop over plain (1,000 steps of 1,000 launches), median and spread;
 *   - a wait step (steps 1-899: no step recorded yet) over plain's, and per launch;
 *   - the step that attaches CUPTI (899's end) and the one that detaches it (911's end);
 *   - a step's own cost: 20,000 steps of one launch (wait=19000 for the schedule), per wait step;
 *   - the CPU (user + system) of the whole command, gpujit's own process included.
 * Usage: bench_step_cost [ROUNDS (15)]. Prints RESULT lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

enum { PLAIN, SCHEDULED, NO_CUPTI, ARMS };
static const char *const arm_names[ARMS] = {"plain", "scheduled", "no_cupti"};

typedef struct run {
  double seconds, cpu_ms, wait_us, wait_sum_us, attach_us, detach_us;
} run;

/* The program's JSON line: the loop (its step times summed), the median and the sum of steps 1..wait-2,
 * and steps wait-1 (ends with the attach) and wait+11 (ends with the detach). */
static int parse(const char *out, long steps, long wait, run *r)
{
  const char *w = strstr(out, "\"step_us\": [");
  double *v = calloc((size_t)steps, sizeof(*v));
  char *end;
  long n = 0;
  if (!w || !v) {
    free(v);
    return -1;
  }
  r->seconds = 0;
  for (const char *p = w + 12; n < steps; p = end + (*end == ',' ? 1 : 0)) {
    v[n] = strtod(p, &end);
    if (end == p)
      break;
    r->seconds += v[n++] / 1e6; /* the loop, at the steps' resolution (its "seconds" has 0.1 ms) */
  }
  if (n != steps) {
    free(v);
    return -1;
  }
  r->attach_us = v[wait - 1];
  r->detach_us = wait + 11 < steps ? v[wait + 11] : 0;
  r->wait_sum_us = 0;
  for (long i = 1; i < wait - 1; i++)
    r->wait_sum_us += v[i];
  r->wait_us = bench_median(v + 1, (int)wait - 2);
  free(v);
  return 0;
}

/* Run argv with stdout into a pipe: its output (the program's line) and CPU. */
static int run_one(char *const argv[], long steps, long wait, run *r)
{
  static char out[1 << 21];
  posix_spawn_file_actions_t fa;
  struct rusage ru;
  size_t len = 0;
  ssize_t got;
  int fds[2], status = 0;
  pid_t pid;
  if (pipe(fds) != 0)
    return -1;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    return -1;
  }
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  while ((got = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0 || (got < 0 && errno == EINTR))
    len += got > 0 ? (size_t)got : 0;
  out[len] = '\0';
  close(fds[0]);
  if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s failed (status %d)\n", argv[0], status);
    return -1;
  }
  r->cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
              (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  return parse(out, steps, wait, r);
}

static int run_arm(int arm, const char *steps, const char *per, const char *schedule, long wait, run *r)
{
  char *argv[12];
  int n = 0;
  if (arm != PLAIN) {
    argv[n++] = (char *)BENCH_GPUJIT;
    argv[n++] = "profile";
    argv[n++] = "-q";
    argv[n++] = arm == SCHEDULED ? "--schedule" : "--no-cupti";
    if (arm == SCHEDULED)
      argv[n++] = (char *)schedule;
    argv[n++] = "--";
  }
  argv[n++] = (char *)BENCH_STEP_STORM;
  argv[n++] = (char *)steps;
  argv[n++] = (char *)per;
  argv[n] = NULL;
  return run_one(argv, atol(steps), wait, r);
}

static double med(run *v, int n, size_t field)
{
  double x[256];
  for (int i = 0; i < n; i++)
    x[i] = *(double *)((char *)&v[i] + field);
  return bench_median(x, n);
}

/* The stand-ins found first: the fake driver's directory on the library path, and a toolkit root
 * whose CUPTI is the fake one (gpujit profile finds CUPTI in $CUDA_PATH). */
static char *stand_ins(void)
{
  char *root = strdup("/tmp/gpujit-bench-steps-XXXXXX"), lib[512], link[600], path[2048];
  const char *old = getenv("LD_LIBRARY_PATH");
  if (!root || !mkdtemp(root))
    return NULL;
  snprintf(lib, sizeof(lib), "%s/lib64", root);
  snprintf(link, sizeof(link), "%s/libcupti.so", lib);
  if (mkdir(lib, 0700) != 0 || symlink(BENCH_FAKE_CUPTI, link) != 0)
    return NULL;
  snprintf(path, sizeof(path), "%s%s%s", BENCH_FAKE_CUDA_DIR, old && *old ? ":" : "", old ? old : "");
  setenv("LD_LIBRARY_PATH", path, 1);
  setenv("CUDA_PATH", root, 1);
  unsetenv("GPUJIT_BENCH_LAUNCH_CALLBACKS");
  return root;
}

static void cleanup(const char *root)
{
  char p[600];
  snprintf(p, sizeof(p), "%s/lib64/libcupti.so", root);
  unlink(p);
  snprintf(p, sizeof(p), "%s/lib64", root);
  rmdir(p);
  rmdir(root);
}

/* Pinned to one CPU, as steps.py pins the GPU runs: $GPUJIT_STEP_CPU, else the first this bench may use. */
static int pin(void)
{
  cpu_set_t set;
  const char *want = getenv("GPUJIT_STEP_CPU");
  int cpu = -1;
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return -1;
  for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
    if (CPU_ISSET(c, &set))
      cpu = c;
  if (want && *want)
    cpu = atoi(want);
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0 ? cpu : -1;
}

/* Per round, the arm against plain: (a - p) * scale, or with scale 0 a / p; the median and spread. */
static void per_round(const run *a, const run *p, int n, size_t field, double scale, double out[3])
{
  double x[256];
  for (int i = 0; i < n; i++) {
    double va = *(const double *)((const char *)&a[i] + field), vp = *(const double *)((const char *)&p[i] + field);
    x[i] = scale ? (va - vp) * scale : va / vp;
  }
  out[0] = bench_median(x, n);
  out[1] = x[0], out[2] = x[n - 1];
}

int main(int argc, char **argv)
{
  static run storm[ARMS][256], single[ARMS][256];
  int rounds = argc > 1 ? atoi(argv[1]) : 15, cpu;
  char *root;
  if (rounds < 1 || rounds > 256) {
    fprintf(stderr, "usage: bench_step_cost [ROUNDS 1..256]\n");
    return 2;
  }
  if (!(root = stand_ins())) {
    fprintf(stderr, "bench_step_cost: cannot set up the stand-in driver and CUPTI: %s\n", strerror(errno));
    return 1;
  }
  cpu = pin();
  for (int i = 0; i < rounds; i++)
    for (int k = 0; k < ARMS; k++) {
      int arm = (i + k) % ARMS;
      if (run_arm(arm, "1000", "1000", "wait=900,warmup=1,active=10,repeat=1", 900, &storm[arm][i]) < 0 ||
          run_arm(arm, "20000", "1", "wait=19000,warmup=1,active=10,repeat=1", 19000, &single[arm][i]) < 0) {
        cleanup(root);
        return 1;
      }
    }
  cleanup(root);
  printf("CONFIG rounds %d, pinned to CPU %d, stand-in driver %s\n", rounds, cpu, BENCH_FAKE_CUDA_DIR);
  printf("RESULT step_cost plain loop_ms %.3f wait_step_us %.2f single_ms %.3f cpu_ms %.1f\n",
         med(storm[PLAIN], rounds, offsetof(run, seconds)) * 1e3, med(storm[PLAIN], rounds, offsetof(run, wait_us)),
         med(single[PLAIN], rounds, offsetof(run, seconds)) * 1e3, med(storm[PLAIN], rounds, offsetof(run, cpu_ms)));
  for (int a = SCHEDULED; a < ARMS; a++) {
    double loop[3], launch[3], step[3], attach[3], detach[3], cpu_ms[3];
    per_round(storm[a], storm[PLAIN], rounds, offsetof(run, seconds), 0, loop);
    per_round(storm[a], storm[PLAIN], rounds, offsetof(run, wait_us), 1e3 / 1000, launch); /* ns a launch */
    per_round(single[a], single[PLAIN], rounds, offsetof(run, wait_sum_us), 1e3 / 18998, step); /* ns a wait step */
    per_round(storm[a], storm[PLAIN], rounds, offsetof(run, attach_us), 1, attach);
    per_round(storm[a], storm[PLAIN], rounds, offsetof(run, detach_us), 1, detach);
    per_round(storm[a], storm[PLAIN], rounds, offsetof(run, cpu_ms), 1, cpu_ms);
    printf("RESULT step_cost %s loop_ratio %.4f spread %.4f-%.4f (1000 steps of 1000 launches)\n", arm_names[a],
           loop[0], loop[1], loop[2]);
    printf("RESULT step_cost %s per_launch_ns %.2f spread %.2f-%.2f (a wait step over plain's, per launch)\n",
           arm_names[a], launch[0], launch[1], launch[2]);
    printf("RESULT step_cost %s per_step_ns %.1f spread %.1f-%.1f (a wait step of 1 launch over plain's: steps 1-18998 of 20000)\n", arm_names[a],
           step[0], step[1], step[2]);
    printf("RESULT step_cost %s attach_step_us %.1f spread %.1f-%.1f detach_step_us %.1f spread %.1f-%.1f (over "
           "plain's step)\n",
           arm_names[a], attach[0], attach[1], attach[2], detach[0], detach[1], detach[2]);
    printf("RESULT step_cost %s cpu_ms %.1f spread %.1f-%.1f (the whole command, over plain)\n", arm_names[a],
           cpu_ms[0], cpu_ms[1], cpu_ms[2]);
  }
  return 0;
}
