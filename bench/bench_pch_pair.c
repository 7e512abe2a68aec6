/*
 * NVRTC's automatic PCH alone, without gpujit (issue 62 item 2): the same pair of header-heavy
 * modules as bench_project's (one include block of ten CUB headers), the second compiled in the
 * process that compiled the first, with `-pch` (NVRTC's automatic PCH) against without. Then
 * the same after fork(): whether a child process inherits a PCH its parent made (the PCH lives
 * in the process's heap; a fork copies the heap). No GPU needed.
 * usage: bench_pch_pair [REPS] [EXTRA NVRTC FLAG...]    prints RESULT nvrtc_pch_second=...
 */
#define _GNU_SOURCE
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

static const char head[] =
    "#include <cub/block/block_reduce.cuh>\n#include <cub/block/block_scan.cuh>\n"
    "#include <cub/block/block_radix_sort.cuh>\n#include <cub/block/block_load.cuh>\n"
    "#include <cub/block/block_store.cuh>\n#include <cub/block/block_exchange.cuh>\n"
    "#include <cub/block/block_histogram.cuh>\n#include <cub/block/block_discontinuity.cuh>\n"
    "#include <cub/warp/warp_reduce.cuh>\n#include <cub/warp/warp_scan.cuh>\n";

static const char *flags[64];
static double now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}
static int nflags;

/* One compile: wall ms; *used/*created: NVRTC's PCH message said so. */
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
  if (nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL) != NVRTC_SUCCESS ||
      nvrtcCompileProgram(prog, (int)n, opts) != NVRTC_SUCCESS) {
    nvrtcGetProgramLogSize(prog, &loglen);
    if ((log = malloc(loglen + 1)) && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
      fprintf(stderr, "%s\n", log);
    exit(1);
  }
  t0 = (now_us() - t0) / 1e3;
  nvrtcGetProgramLogSize(prog, &loglen);
  if ((log = malloc(loglen + 1)) && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
    if (used)
      *used = strstr(log, ": using precompiled header") != NULL;
    if (created)
      *created = strstr(log, ": creating precompiled header") != NULL;
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

int main(int argc, char **argv)
{
  int reps = argc > 1 ? atoi(argv[1]) : 3, used = 0, created = 0, child_used = 0;
  double off[16], on[16], create[16], forked[16];
  char dir[] = "/tmp/gpujit-bench-pch-XXXXXX", pchdir[64], cccl[512], inc[512];
  const char *root = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
  if (reps < 1 || reps > 16 || !mkdtemp(dir))
    return 2;
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
  compile(body_a, "warm.cu", 0, NULL, NULL); /* NVRTC loaded, the page cache warm */
  for (int r = 0; r < reps; r++) {
    pid_t pid;
    int status;
    off[r] = compile(body_b, "b.cu", 0, NULL, NULL);
    nvrtcSetPCHHeapSize(0); /* every PCH of the process gone: a fresh heap for each rep */
    nvrtcSetPCHHeapSize((size_t)512 << 20);
    create[r] = compile(body_a, "a.cu", 1, NULL, &created);
    on[r] = compile(body_b, "b.cu", 1, &used, NULL);
    if (!created || !used) {
      fprintf(stderr, "bench_pch_pair: PCH %s\n", created ? "created but not used" : "not created");
      return 1;
    }
    fflush(stdout);
    if ((pid = fork()) == 0) { /* a child of the process that holds the PCH */
      int u = 0;
      compile(body_b, "b.cu", 1, &u, NULL);
      _exit(u ? 10 : 11);
    }
    {
      double t0 = now_us();
      waitpid(pid, &status, 0);
      forked[r] = (now_us() - t0) / 1e3;
      child_used = WIFEXITED(status) && WEXITSTATUS(status) == 10;
    }
  }
  {
    double mo = bench_median(off, reps), mp = bench_median(on, reps), mc = bench_median(create, reps);
    double mf = bench_median(forked, reps);
    printf("bench_pch_pair: NVRTC alone, %d rep(s)%s%s\n", reps, nflags > 5 ? ", extra flags from " : "",
           nflags > 5 ? argv[2] : "");
    printf("  first module making the PCH %.1f ms; second: -pch %.1f ms, none %.1f ms: %.2fx faster\n", mc, mp, mo,
           mo / mp);
    printf("  the second in a fork()ed child of the process holding the PCH: %.1f ms (fork, compile, exit), PCH %s\n", mf,
           child_used ? "used" : "not used");
    printf("RESULT nvrtc_pch_second=%.2f nvrtc_pch_create_ms=%.1f nvrtc_pch_use_ms=%.1f nvrtc_nopch_ms=%.1f "
           "fork_child_uses_pch=%d\n", mo / mp, mc, mp, mo, child_used);
  }
  {
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
  }
}
