/* What the C benchmarks share: medians, and a whole process timed (posix_spawn + waitpid). */
#ifndef GPUJIT_BENCH_UTIL_H
#define GPUJIT_BENCH_UTIL_H

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "base/clock.h"

extern char **environ;

static inline int bench_cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/** The median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/** Run argv (stdout to /dev/null) and return its wall time in ms; its user + system time in ms
 *  in *cpu_ms where given. Exits on failure. */
static inline double bench_run_process_cpu(char *const argv[], double *cpu_ms)
{
  struct rusage ru;
  pid_t pid;
  int status;
  posix_spawn_file_actions_t fa;
  double t0 = gpujit__now_us();
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
  if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
    perror(argv[0]);
    exit(1);
  }
  posix_spawn_file_actions_destroy(&fa);
  if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s failed\n", argv[0]);
    exit(1);
  }
  if (cpu_ms)
    *cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
              (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  return (gpujit__now_us() - t0) / 1e3;
}

/** Run argv (stdout to /dev/null) and return its wall time in ms; exits on failure. */
static inline double bench_run_process(char *const argv[]) { return bench_run_process_cpu(argv, NULL); }

#endif
