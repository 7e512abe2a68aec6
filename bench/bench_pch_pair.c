/*
 * NVRTC's automatic PCH alone, without gpujit (issue 62 item 2): the same pair of header-heavy
 * modules as bench_project's (one include block of ten CUB headers), the second compiled in the
 * process that compiled the first, with `-pch` (NVRTC's automatic PCH) against without. Then
 * the same after fork(): whether a child process inherits a PCH its parent made (the PCH lives
 * in the process's heap; a fork copies the heap). No GPU needed.
 * Then (`gpujit` as the first flag) the same pair through gpujit_module_build_files in one
 * process, lean (NVRTC makes PTX, the toolkit's ptxas the cubin) and not: what gpujit adds.
 * Times are wall and CPU (this process: a shared machine hides less in CPU time).
 * usage: bench_pch_pair [REPS] [gpujit | EXTRA NVRTC FLAG...]    prints RESULT lines
 * (BENCH_PCH_LOG=1: NVRTC's logs on stderr)
 */
#define _GNU_SOURCE
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "compile/includes/includes.h"
#include "gpujit.h"

static const char head[] =
    "#include <cub/block/block_reduce.cuh>\n#include <cub/block/block_scan.cuh>\n"
    "#include <cub/block/block_radix_sort.cuh>\n#include <cub/block/block_load.cuh>\n"
    "#include <cub/block/block_store.cuh>\n#include <cub/block/block_exchange.cuh>\n"
    "#include <cub/block/block_histogram.cuh>\n#include <cub/block/block_discontinuity.cuh>\n"
    "#include <cub/warp/warp_reduce.cuh>\n#include <cub/warp/warp_scan.cuh>\n";

static const char *flags[64];
static double clock_us(clockid_t c)
{
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}
static double now_us(void) { return clock_us(CLOCK_MONOTONIC); }
static double cpu_us(void) { return clock_us(CLOCK_PROCESS_CPUTIME_ID); }
static double last_cpu_ms; /* the last compile's CPU time */
static int nflags;

/* One compile: wall ms (CPU ms in last_cpu_ms); *used, *created: NVRTC's PCH message said so. */
static double compile(const char *body, const char *name, int pch, int *used, int *created)
{
  char src[8192], *log = NULL;
  const char *opts[70];
  nvrtcProgram prog;
  size_t n = 0, loglen = 0;
  double t0;
  snprintf(src, sizeof(src), "%s%s", head, body);
  for (int i = 0; i < nflags; i++)
    opts[n++] = flags[i];
  if (pch)
    opts[n++] = "-pch";
  t0 = now_us();
  last_cpu_ms = cpu_us();
  if (nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL) != NVRTC_SUCCESS ||
      nvrtcCompileProgram(prog, (int)n, opts) != NVRTC_SUCCESS) {
    nvrtcGetProgramLogSize(prog, &loglen);
    if ((log = malloc(loglen + 1)) && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
      fprintf(stderr, "%s\n", log);
    exit(1);
  }
  t0 = (now_us() - t0) / 1e3;
  last_cpu_ms = (cpu_us() - last_cpu_ms) / 1e3;
  nvrtcGetProgramLogSize(prog, &loglen);
  if ((log = malloc(loglen + 1)) && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
    if (used)
      *used = strstr(log, ": using precompiled header") != NULL;
    if (created)
      *created = strstr(log, ": creating precompiled header") != NULL;
    if (getenv("BENCH_PCH_LOG"))
      fprintf(stderr, "%s: %s\n", name, log);
  }
  free(log);
  nvrtcDestroyProgram(&prog);
  return t0;
}

static const char body_a[] = "extern \"C\" __global__ void a(float *o) { o[threadIdx.x] *= 2.0f; }\n";
static const char body_b[] =
    "extern \"C\" __global__ void b(int *o) {\n  using S = cub::BlockScan<int, 128>;\n"
    "  __shared__ typename S::TempStorage t;\n  int v;\n  S(t).ExclusiveSum(o[threadIdx.x], v);\n"
    "  o[threadIdx.x] = v;\n}\n";

/* The pair through gpujit in this process: the second module's wall and CPU ms, PCH used or not. */
static void gpujit_pair(const char *dir, int lean, int pch, double *wall, double *cpu)
{
  gpujit_module_options mo = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  char a[600], b[600];
  const char *fa = a, *fb = b;
  FILE *f;
  double t, c;
  snprintf(a, sizeof(a), "%s/a.cu", dir);
  snprintf(b, sizeof(b), "%s/b.cu", dir);
  if (!(f = fopen(a, "w")) || fprintf(f, "%s%s", head, body_a) < 0 || fclose(f) || !(f = fopen(b, "w")) ||
      fprintf(f, "%s%s", head, body_b) < 0 || fclose(f))
    exit(1);
  mo.arch = "sm_90";
  mo.lean = lean;
  mo.pch = pch ? GPUJIT_PCH_ON : GPUJIT_PCH_OFF;
  if (gpujit_module_build_files(&m, &fa, 1, &mo) < 0) {
    fprintf(stderr, "gpujit: %s\n", gpujit_error_last());
    exit(1);
  }
  gpujit_module_free(m);
  t = now_us();
  c = cpu_us();
  if (gpujit_module_build_files(&m, &fb, 1, &mo) < 0) {
    fprintf(stderr, "gpujit: %s\n", gpujit_error_last());
    exit(1);
  }
  *wall = (now_us() - t) / 1e3;
  *cpu = (cpu_us() - c) / 1e3;
  if (pch && gpujit_module_pch(m, NULL) != GPUJIT_PCH_STATUS_USED) {
    fprintf(stderr, "gpujit: the second module did not use the PCH\n");
    exit(1);
  }
  gpujit_module_free(m);
}

/* gpujit's pair, each variant in a child of its own (a fresh PCH heap and gpujit state). */
static int gpujit_mode(int reps, const char *dir)
{
  static const char *const names[4] = {"lean, PCH", "lean, --no-pch", "not lean, PCH", "not lean, --no-pch"};
  double wall[4][16], cpu[4][16];
  int fds[2];
  for (int r = 0; r < reps; r++)
    for (int v = 0; v < 4; v++) {
      pid_t pid;
      double got[2] = {0, 0};
      if (pipe(fds) < 0 || (pid = fork()) < 0)
        return 1;
      if (pid == 0) {
        close(fds[0]);
        gpujit__inc_files_keep((size_t)256 << 20); /* as a project's worker does */
        gpujit_pair(dir, v < 2, v % 2 == 0, &got[0], &got[1]);
        _exit(write(fds[1], got, sizeof(got)) == sizeof(got) ? 0 : 1);
      }
      close(fds[1]);
      if (read(fds[0], got, sizeof(got)) != sizeof(got))
        return 1;
      close(fds[0]);
      waitpid(pid, NULL, 0);
      wall[v][r] = got[0];
      cpu[v][r] = got[1];
    }
  printf("bench_pch_pair: gpujit_module_build_files as a worker builds, second module of the pair, %d rep(s) "
         "(wall / CPU ms of this process: lean's ptxas runs in a child)\n", reps);
  for (int v = 0; v < 4; v++) {
    double w = bench_median(wall[v], reps), c = bench_median(cpu[v], reps);
    printf("  %-20s %9.1f / %9.1f\n", names[v], w, c);
    printf("RESULT gpujit_pair variant=%d wall_ms=%.1f cpu_ms=%.1f\n", v, w, c);
  }
  printf("RESULT gpujit_pch_second=%.2f gpujit_pch_second_cpu=%.2f\n", bench_median(wall[1], reps) / bench_median(wall[0], reps),
         bench_median(cpu[1], reps) / bench_median(cpu[0], reps));
  return 0;
}

int main(int argc, char **argv)
{
  int reps = argc > 1 ? atoi(argv[1]) : 3, used = 0, created = 0, child_used = 0;
  double off[16], on[16], create[16], forked[16];
  char dir[] = "/tmp/gpujit-bench-pch-XXXXXX", pchdir[96], cccl[512], inc[512];
  const char *root = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
  double cpu_off[16], cpu_on[16];
  if (reps < 1 || reps > 16 || !mkdtemp(dir))
    return 2;
  if (argc > 2 && !strcmp(argv[2], "gpujit")) {
    int rc = gpujit_mode(reps, dir);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? rc : 1;
  }
  snprintf(pchdir, sizeof(pchdir), "--pch-dir=%s", dir);
  snprintf(cccl, sizeof(cccl), "-I%s/include/cccl", root);
  snprintf(inc, sizeof(inc), "-I%s/include", root);
  flags[nflags++] = "-arch=sm_90"; /* gpujit's flags for the pair (bench_project's defaults) */
  flags[nflags++] = "--ptxas-options=-v";
  flags[nflags++] = cccl;
  flags[nflags++] = inc;
  flags[nflags++] = pchdir;
  for (int i = 2; i < argc && nflags < 60; i++)
    flags[nflags++] = argv[i];
  for (int r = 0; r < reps; r++) { /* each rep in a process of its own: a fresh PCH heap */
    double got[8] = {0};
    int fds[2];
    pid_t rep;
    fflush(stdout);
    if (pipe(fds) < 0 || (rep = fork()) < 0)
      return 1;
    if (rep == 0) {
      pid_t pid;
      int status;
      close(fds[0]);
      /* a PCH dir of its own: NVRTC finds another process's PCH file in it, refuses it, and makes none */
      snprintf(pchdir, sizeof(pchdir), "--pch-dir=%s/r%d", dir, r);
      if (mkdir(pchdir + 10, 0700) < 0)
        _exit(1);
      nvrtcSetPCHHeapSize((size_t)512 << 20); /* room for the ten CUB headers' PCH (256 MiB is not) */
      compile(body_a, "warm.cu", 0, NULL, NULL); /* NVRTC loaded, the page cache warm */
      got[0] = compile(body_b, "b.cu", 0, NULL, NULL);
      got[1] = last_cpu_ms;
      got[2] = compile(body_a, "a.cu", 1, NULL, &created);
      got[3] = compile(body_b, "b.cu", 1, &used, NULL);
      got[4] = last_cpu_ms;
      got[7] = created && used;
      if ((pid = fork()) == 0) { /* a child of the process that holds the PCH */
        int u = 0;
        compile(body_b, "b.cu", 1, &u, NULL);
        _exit(u ? 10 : 11);
      }
      {
        double t0 = now_us();
        waitpid(pid, &status, 0);
        got[5] = (now_us() - t0) / 1e3;
        got[6] = WIFEXITED(status) && WEXITSTATUS(status) == 10;
      }
      _exit(write(fds[1], got, sizeof(got)) == sizeof(got) ? 0 : 1);
    }
    close(fds[1]);
    if (read(fds[0], got, sizeof(got)) != sizeof(got) || !got[7]) {
      fprintf(stderr, "bench_pch_pair: the PCH was not %s\n", got[2] > 0 ? "made and used" : "made");
      return 1;
    }
    close(fds[0]);
    waitpid(rep, NULL, 0);
    off[r] = got[0], cpu_off[r] = got[1], create[r] = got[2], on[r] = got[3], cpu_on[r] = got[4];
    forked[r] = got[5];
    child_used = got[6] != 0;
  }
  {
    double mo = bench_median(off, reps), mp = bench_median(on, reps), mc = bench_median(create, reps);
    double mf = bench_median(forked, reps), co = bench_median(cpu_off, reps), cp = bench_median(cpu_on, reps);
    printf("bench_pch_pair: NVRTC alone, %d rep(s)%s%s\n", reps, nflags > 5 ? ", extra flags from " : "",
           nflags > 5 ? argv[2] : "");
    printf("  first module making the PCH %.1f ms; second: -pch %.1f ms, none %.1f ms: %.2fx faster\n", mc, mp, mo,
           mo / mp);
    printf("  CPU time of the second: -pch %.1f ms, none %.1f ms: %.2fx\n", cp, co, co / cp);
    printf("  the second in a fork()ed child of the process holding the PCH: %.1f ms (fork, compile, exit), PCH %s\n", mf,
           child_used ? "used" : "not used");
    printf("RESULT nvrtc_pch_second=%.2f nvrtc_pch_create_ms=%.1f nvrtc_pch_use_ms=%.1f nvrtc_nopch_ms=%.1f "
           "fork_child_uses_pch=%d nvrtc_pch_second_cpu=%.2f\n", mo / mp, mc, mp, mo, child_used, co / cp);
  }
  {
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
  }
}
