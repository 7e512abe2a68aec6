/*
 * A header-heavy module's cache hit against a trivial one's, as whole `gpujit build` processes
 * (what a build system or a test suite pays per call): examples/block_reduce.cu (CUB: about
 * 600 toolkit headers in its dependency group) against examples/saxpy.cu (none), interleaved
 * in one run, in-process (GPUJIT_SERVER=0: this process stats every header of the group) and
 * with a build server running (it keeps the group verified under inotify and vouches for it).
 * Each call's wall time and its CPU time (user + system, all its threads: what a busy machine
 * cannot hide) are kept; medians are printed, and the fastest call's wall time.
 * Targets: block_reduce's hit <= 1.2x saxpy's in a fresh process without a server (issue 43),
 * and with a server running (issue 27). A sweep of the threads that check the group
 * ($GPUJIT_CHECK_THREADS: 1, 2, 4, 8, 16; 8 is the default cap, the machine's CPUs the other;
 * against the defaults — with four CPUs or more, helpers left where the scheduler puts them; with
 * fewer, each bound to a CPU other than the lookup's — "b"/"u" bound or not, the measuring switch
 * $GPUJIT_BENCH_CHECK) shows how
 * the check scales on the machine, in the same interleaved rounds.
 * Last, hits in one process (gpujit_module_build_files() again and again, as a Python session or a
 * program building many modules makes them), with the process's own watch of the group
 * (cache/records/group_watch.c) and without it, in alternated child processes. Target (issue 62):
 * block_reduce's in-process hit <= 1.5x saxpy's.
 * Usage: bench_hit [HITS] [SWEEP: the settings to sweep, comma-separated]. Prints a table and
 * RESULT lines.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "cache/records/group_watch.h"
#include "gpujit.h"

static char dir[] = "/tmp/bench-hit-XXXXXX";

static double cpu_ms; /* the last build's user + system time */

#define SWEEP_MAX 24
/* a count for $GPUJIT_CHECK_THREADS, and letters for $GPUJIT_BENCH_CHECK against the machine's
 * defaults (cache/records/check_threads.c): "b"/"u" each helper bound to a CPU other than the
 * lookup's, or not */
static const char *sweep[SWEEP_MAX] = {"1", "2", "2u", "4", "8", "8b", "16"};
static int nsweep = 7;

static double build(const char *example, const char *cache, bool server)
{
  char src[600], out[600];
  snprintf(src, sizeof(src), "%s/%s.cu", GPUJIT_EXAMPLES_DIR, example);
  snprintf(out, sizeof(out), "%s/%s.cubin", dir, example);
  char *argv[] = {(char *)GPUJIT_CLI, "build", "-q", "--cache-dir", (char *)cache, "-o", out, src, NULL};
  setenv("GPUJIT_SERVER", server ? "" : "0", 1);
  return bench_run_process_cpu(argv, &cpu_ms);
}

static double min_of(const double *v, int n)
{
  double m = v[0];
  for (int i = 1; i < n; i++)
    m = v[i] < m ? v[i] : m;
  return m;
}

static void server(const char *verb, const char *cache)
{
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "GPUJIT_SERVER= '%s' server %s -q --workers 1 --cache-dir '%s'", GPUJIT_CLI, verb,
           cache);
  if (system(cmd) != 0 && !strcmp(verb, "start")) {
    fprintf(stderr, "cannot start the server\n");
    exit(1);
  }
}


/* ---- in-process hits: gpujit_module_build_files() again and again in one process ---- */

/* One in-process hit of `example` from cache `c`: wall ms, and CPU ms (every thread of the
 * process) into *cpu. Exits unless it is a hit. */
static double hit_in_process(gpujit_cache *c, const char *example, double *cpu)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  char src[600];
  const char *srcs[1] = {src};
  struct timespec c0, c1;
  double t0;
  snprintf(src, sizeof(src), "%s/%s.cu", GPUJIT_EXAMPLES_DIR, example);
  o.arch = "sm_90"; /* nothing asks the driver */
  o.cache = c;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  t0 = gpujit__now_us();
  if (gpujit_module_build_files(&m, srcs, 1, &o) < 0 || gpujit_module_cache_status(m) != GPUJIT_CACHE_HIT) {
    fprintf(stderr, "%s: expected an in-process hit: %s\n", example, gpujit_error_last());
    exit(1);
  }
  t0 = (gpujit__now_us() - t0) / 1e3;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  *cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6;
  gpujit_module_free(m);
  return t0;
}

#define INPROC_HITS 200

/*
 * A child process (forked before this process looked anything up, so that its check settings
 * are its own: `bench` is $GPUJIT_BENCH_CHECK, "w" no watch of the process's own) hits saxpy and
 * block_reduce alternately INPROC_HITS times each from `cache` (after 3 each to settle) and
 * writes its medians into `out`: wall and CPU ms, saxpy's then block_reduce's; then how many
 * lookups the process's own watch vouched for.
 */
static void inproc_child(const char *cache, const char *bench, double out[5])
{
  int fd[2];
  pid_t pid;
  if (pipe(fd) != 0 || (pid = fork()) < 0) {
    perror("fork");
    exit(1);
  }
  if (pid == 0) {
    static double w[2][INPROC_HITS], c[2][INPROC_HITS];
    gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
    gpujit_cache *gc;
    double r[5], cpu;
    gpujit__group_watch_counts wc;
    static const char *const ex[2] = {"saxpy", "block_reduce"};
    close(fd[0]);
    setenv("GPUJIT_BENCH_CHECK", bench, 1);
    co.dir = cache;
    if (gpujit_cache_open(&gc, &co) < 0)
      _exit(1);
    for (int i = 0; i < 3; i++)
      for (int e = 0; e < 2; e++)
        hit_in_process(gc, ex[e], &cpu);
    for (int i = 0; i < INPROC_HITS; i++)
      for (int e = 0; e < 2; e++)
        w[e][i] = hit_in_process(gc, ex[e], &c[e][i]);
    for (int e = 0; e < 2; e++)
      r[2 * e] = bench_median(w[e], INPROC_HITS), r[2 * e + 1] = bench_median(c[e], INPROC_HITS);
    gpujit__group_watch_process_counts(&wc);
    r[4] = (double)wc.vouched;
    gpujit_cache_free(gc);
    _exit(write(fd[1], r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
  }
  close(fd[1]);
  if (read(fd[0], out, 5 * sizeof(double)) != (ssize_t)(5 * sizeof(double)) || waitpid(pid, NULL, 0) != pid) {
    fprintf(stderr, "an in-process child failed\n");
    exit(1);
  }
  close(fd[0]);
}

/* In-process hits, with the process's own watch of the group (the default) and without ("w"),
 * in `rounds` alternated child processes: medians of the children's medians, and their spread. */
static void inproc(const char *cache, int rounds)
{
  static const char *const how[2] = {"", "w"};
  static double v[2][4][64]; /* [setting][saxpy wall, cpu, block_reduce wall, cpu][round] */
  double m[2][4], lo[2], hi[2], vouched[2] = {0, 0};
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < 2; k++) {
      double out[5];
      int s = (r + k) % 2;
      inproc_child(cache, how[s], out);
      vouched[s] += out[4];
      for (int q = 0; q < 4; q++)
        v[s][q][r] = out[q];
    }
  printf("in-process hits (gpujit_module_build_files, %d of each per process, medians of %d processes' medians)\n",
         INPROC_HITS, rounds);
  printf("%-40s %12s %14s %8s   %-26s %s\n", "", "saxpy", "block_reduce", "ratio", "CPU ms (ratio)",
         "ratio's spread");
  for (int s = 0; s < 2; s++) {
    double ratio[64];
    for (int r = 0; r < rounds; r++)
      ratio[r] = v[s][2][r] / v[s][0][r];
    lo[s] = hi[s] = ratio[0];
    for (int r = 1; r < rounds; r++)
      lo[s] = ratio[r] < lo[s] ? ratio[r] : lo[s], hi[s] = ratio[r] > hi[s] ? ratio[r] : hi[s];
    for (int q = 0; q < 4; q++)
      m[s][q] = bench_median(v[s][q], rounds);
    printf("%-40s %9.4f ms %11.4f ms %7.2fx   %6.4f %6.4f (%.2fx)   %.2f..%.2fx\n",
           s ? "no watch of its own (GPUJIT_BENCH_CHECK=w)" : "the process's watch (the default)", m[s][0], m[s][2],
           m[s][2] / m[s][0], m[s][1], m[s][3], m[s][3] / m[s][1], lo[s], hi[s]);
  }
  for (int s = 0; s < 2; s++)
    printf("RESULT hit_in_process_ms %s saxpy %.4f block_reduce %.4f ratio %.3f cpu_ratio %.3f spread %.2f..%.2f\n",
           s ? "no_watch" : "watch", m[s][0], m[s][2], m[s][2] / m[s][0], m[s][3] / m[s][1], lo[s], hi[s]);
  /* the watch refuses a filesystem inotify cannot vouch for (overlayfs: a container's toolkit) */
  printf("CHECK hit_in_process_watch %s: the process's watch vouched for block_reduce's group %.0f times in %d "
         "processes, %.0f without it (%s)\n", vouched[0] > 0 && vouched[1] == 0 ? "ok" : "FAIL", vouched[0], rounds,
         vouched[1], vouched[0] > 0 ? "from each process's third lookup on" :
         "none: is the toolkit or the cache on a filesystem inotify cannot vouch for, overlayfs or NFS?");
  printf("target: an in-process CUB hit within 1.5x of saxpy's (issue 62): %.2fx (without the watch %.2fx)\n",
         m[0][2] / m[0][0], m[1][2] / m[1][0]);
}

int main(int argc, char **argv)
{
  static const char *const ex[2] = {"saxpy", "block_reduce"};
  static const char *const how[2] = {"in-process (GPUJIT_SERVER=0)", "a server running"};
  int hits = argc > 1 ? atoi(argv[1]) : 41;
  if (argc > 2) { /* another sweep: "1,4f,8s" */
    nsweep = 0;
    for (char *tok = strtok(argv[2], ","); tok && nsweep < SWEEP_MAX; tok = strtok(NULL, ","))
      sweep[nsweep++] = tok;
  }
  char cl[600], cs[600];
  double t[2][2][256], c[2][2][256], m[2][2], mc[2][2], lo[2][2]; /* [server][example][call] */
  static double st[SWEEP_MAX][256], sc[SWEEP_MAX][256];                       /* block_reduce, in-process */
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t aff;
  int usable = sched_getaffinity(0, sizeof(aff), &aff) == 0 ? CPU_COUNT(&aff) : -1;
  if (hits < 1 || hits > 256 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: bench_hit [HITS 1..256] [SWEEP: a count of GPUJIT_CHECK_THREADS, GPUJIT_BENCH_CHECK letters after it, as 1,8u,8b]\n");
    return 2;
  }
  snprintf(cl, sizeof(cl), "%s/cache_local", dir);
  snprintf(cs, sizeof(cs), "%s/cache_server", dir);
  for (int e = 0; e < 2; e++) { /* the misses that fill both caches */
    build(ex[e], cl, false);
    build(ex[e], cs, false);
  }
  server("start", cs);
  for (int e = 0; e < 2; e++) /* the server's first vouch: it watches and verifies the group */
    build(ex[e], cs, true);
  for (int i = 0; i < hits; i++) {
    for (int s = 0; s < 2; s++)
      for (int e = 0; e < 2; e++) {
        t[s][e][i] = build(ex[e], s ? cs : cl, s == 1);
        c[s][e][i] = cpu_ms;
      }
    for (int k = 0; k < nsweep; k++) {
      char count[16];
      snprintf(count, sizeof(count), "%.*s", (int)strspn(sweep[k], "0123456789"), sweep[k]);
      setenv("GPUJIT_CHECK_THREADS", count, 1);
      setenv("GPUJIT_BENCH_CHECK", sweep[k] + strlen(count), 1);
      st[k][i] = build(ex[1], cl, false);
      sc[k][i] = cpu_ms;
      unsetenv("GPUJIT_CHECK_THREADS");
      unsetenv("GPUJIT_BENCH_CHECK");
    }
  }
  server("stop", cs);
  for (int s = 0; s < 2; s++)
    for (int e = 0; e < 2; e++) {
      lo[s][e] = min_of(t[s][e], hits);
      m[s][e] = bench_median(t[s][e], hits);
      mc[s][e] = bench_median(c[s][e], hits);
    }
  printf("gpujit build cache hits as whole processes, medians of %d interleaved\n", hits);
  printf("%-30s %12s %14s %8s   %-23s %-23s\n", "", "saxpy", "block_reduce", "ratio", "CPU ms (ratio)",
         "fastest ms (ratio)");
  for (int s = 0; s < 2; s++)
    printf("%-30s %9.2f ms %11.2f ms %7.2fx   %5.2f %5.2f (%.2fx)      %5.2f %5.2f (%.2fx)\n", how[s], m[s][0], m[s][1],
           m[s][1] / m[s][0], mc[s][0], mc[s][1], mc[s][1] / mc[s][0], lo[s][0], lo[s][1], lo[s][1] / lo[s][0]);
  printf("block_reduce in-process, at most N threads checking its group (%ld CPUs online, %d usable):\n", ncpu,
         usable);
  for (int k = 0; k < nsweep; k++) {
    double w = bench_median(st[k], hits), cp = bench_median(sc[k], hits);
    printf("  N=%-3s %26s %11.2f ms %7.2fx   %5s %5.2f (%.2fx)\n", sweep[k], "", w, w / m[0][0], "", cp, cp / mc[0][0]);
    printf("RESULT hit_ms block_reduce_threads_%s %.3f\n", sweep[k], w);
  }
  printf("RESULT hit_ms saxpy_in_process %.3f\nRESULT hit_ms block_reduce_in_process %.3f\n", m[0][0], m[0][1]);
  printf("RESULT hit_ms saxpy_server %.3f\nRESULT hit_ms block_reduce_server %.3f\n", m[1][0], m[1][1]);
  printf("RESULT hit_cpu_ms saxpy_in_process %.3f\nRESULT hit_cpu_ms block_reduce_in_process %.3f\n", mc[0][0],
         mc[0][1]);
  printf("target: block_reduce's hit <= 1.2x saxpy's in a fresh process, no server (issue 43): %.2fx\n",
         m[0][1] / m[0][0]);
  printf("target: the same with a server running (issue 27): %.2fx\n", m[1][1] / m[1][0]);
  unsetenv("GPUJIT_SERVER");
  inproc(cl, hits < 3 ? 3 : hits > 21 ? 21 : hits);
  {
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
      return 1;
  }
  return 0;
}
