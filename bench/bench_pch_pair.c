/*
 * NVRTC's automatic PCH alone, without gpujit (issue 62 item 2): the same pair of header-heavy
 * modules as bench_project's (one include block of ten CUB headers), the second compiled in the
 * process that compiled the first, with `-pch` (NVRTC's automatic PCH) against without. Then
 * the same after fork(): whether a child process inherits a PCH its parent made (the PCH lives
 * in the process's heap; a fork copies the heap). No GPU needed.
 * Then what bounds a parallel build's PCH critical path (its making, then a use): a PCH made from
 * the include block alone (no kernel code) against one made from a module; one made with
 * -fdevice-syntax-only (whether a normal compile takes it); and a PCH file used by another process
 * (NVRTC refuses a file whose heap address differs: with address-space randomisation off, the
 * processes' heaps agree).
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
#include <spawn.h>
#include <sys/personality.h>
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
static const char body_tiny[] = "extern \"C\" __global__ void w(float *o) { o[0] = 1.0f; }\n"; /* no headers */
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
static const char *extra_flag; /* one more flag for the next compiles (NULL: none) */

/* One compile: wall ms (CPU ms in last_cpu_ms); *used, *created: NVRTC's PCH message said so. */
static double compile(const char *body, const char *name, int pch, int *used, int *created)
{
  char src[8192], *log = NULL;
  const char *opts[70];
  nvrtcProgram prog;
  size_t n = 0, loglen = 0;
  double t0;
  snprintf(src, sizeof(src), "%s%s", body == body_tiny ? "" : head, body);
  for (int i = 0; i < nflags; i++)
    opts[n++] = flags[i];
  if (pch)
    opts[n++] = "-pch";
  if (extra_flag)
    opts[n++] = extra_flag;
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

/* ---- the critical path of a parallel PCH build: its making, then a use -------------------- */

/* A process of its own (forked from one that compiled nothing: no PCH in its heap), with a PCH
 * dir of its own: `kind` 0 makes the PCH from the include block alone, 1 the same with
 * -fdevice-syntax-only; then module b with -pch. out: making CPU ms, made, b's CPU ms, b used it. */
static int making_variant(int kind, const char *dir, int rep, double out[4])
{
  int fds[2];
  pid_t pid;
  if (pipe(fds) < 0 || (pid = fork()) < 0)
    return -1;
  if (pid == 0) {
    static char pd[600];
    int made = 0, used = 0;
    double got[4];
    close(fds[0]);
    snprintf(pd, sizeof(pd), "--pch-dir=%s/v%d-%d", dir, kind, rep);
    if (mkdir(pd + 10, 0700) < 0)
      _exit(1);
    flags[4] = pd;
    nvrtcSetPCHHeapSize((size_t)512 << 20);
    compile(body_tiny, "warm.cu", 0, NULL, NULL); /* NVRTC loaded */
    extra_flag = kind == 1 ? "-fdevice-syntax-only" : NULL;
    compile("", "block.cu", 1, NULL, &made); /* the include block and nothing else */
    got[0] = last_cpu_ms;
    got[1] = made;
    extra_flag = NULL;
    compile(body_b, "b.cu", 1, &used, NULL);
    got[2] = last_cpu_ms;
    got[3] = used;
    _exit(write(fds[1], got, sizeof(got)) == sizeof(got) ? 0 : 1);
  }
  close(fds[1]);
  if (read(fds[0], out, 4 * sizeof(double)) != 4 * sizeof(double))
    out[0] = -1;
  close(fds[0]);
  waitpid(pid, NULL, 0);
  return out[0] < 0 ? -1 : 0;
}

/* `--shared create|use DIR OUT`: the creator (address-space randomisation off, from its exec)
 * makes a's PCH in DIR and, while it lives, runs two users of DIR: one with randomisation off as
 * its own, one with it on. A user compiles b with -pch and writes "USED CPU_MS" to OUT. */
static int shared_main(const char *role, const char *pdir, const char *out)
{
  static char pd[600];
  int used = 0, made = 0;
  FILE *f;
  snprintf(pd, sizeof(pd), "--pch-dir=%s", pdir);
  flags[4] = pd;
  nvrtcSetPCHHeapSize((size_t)512 << 20); /* the same heap in every process: its address agrees */
  compile(body_tiny, "warm.cu", 0, NULL, NULL);
  if (!strcmp(role, "use")) {
    compile(body_b, "b.cu", 1, &used, NULL);
    if (!(f = fopen(out, "w")) || fprintf(f, "%d %.1f\n", used, last_cpu_ms) < 0 || fclose(f))
      return 1;
    return 0;
  }
  compile(body_a, "a.cu", 1, NULL, &made);
  if (!made)
    return 3;
  for (int rand_on = 0; rand_on < (getenv("BENCH_PCH_RAND") ? 2 : 1); rand_on++) { /* on: a refused PCH, one more making */
    char outn[700], self[600];
    char *args[] = {self, (char *)"--shared", (char *)"use", (char *)pdir, outn, NULL};
    int persona = personality(0xffffffff), status;
    pid_t pid;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
      return 1;
    self[n] = '\0';
    snprintf(outn, sizeof(outn), "%s.%d", out, rand_on);
    if (rand_on)
      personality((unsigned long)persona & ~(unsigned long)ADDR_NO_RANDOMIZE);
    if (posix_spawn(&pid, self, NULL, NULL, args, environ) != 0 || waitpid(pid, &status, 0) != pid ||
        !WIFEXITED(status) || WEXITSTATUS(status))
      return 1;
    personality((unsigned long)persona);
  }
  return 0;
}

/* One rep of the shared-file measure: [used with randomisation off, its CPU ms, used with it on
 * (the first rep only)]. */
static int shared_rep(const char *dir, int rep, double out[3])
{
  char pdir[600], res[700], res1[720];
  FILE *f;
  pid_t pid;
  int status, used[2] = {0, 0};
  double cpu[2] = {0, 0};
  snprintf(pdir, sizeof(pdir), "%s/shared%d", dir, rep);
  snprintf(res, sizeof(res), "%s/shared%d.out", dir, rep);
  if (mkdir(pdir, 0700) < 0 || (pid = fork()) < 0)
    return -1;
  if (pid == 0) {
    char self[600];
    if (rep == 0) /* the first rep also tries a user with randomisation on (refused: it makes its own) */
      setenv("BENCH_PCH_RAND", "1", 1);
    char *args[] = {self, (char *)"--shared", (char *)"create", pdir, res, NULL};
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0 || personality(ADDR_NO_RANDOMIZE) < 0)
      _exit(2);
    self[n] = '\0';
    execv(self, args);
    _exit(2);
  }
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
    return -1;
  for (int k = 0; k < (rep == 0 ? 2 : 1); k++) {
    snprintf(res1, sizeof(res1), "%s.%d", res, k);
    if (!(f = fopen(res1, "r")) || fscanf(f, "%d %lf", &used[k], &cpu[k]) != 2)
      return -1;
    fclose(f);
  }
  out[0] = used[0], out[1] = cpu[0], out[2] = used[1];
  return 0;
}

/* The critical path's rows: making from the block alone, syntax-only, another process's file. */
static void critical_path_rows(int reps, const char *dir, double module_make_cpu, double use_cpu, double plain_cpu)
{
  double block_cpu[16], syn_made = 1, syn_used = 0, sh_used = 1, sh_rand_used = 0, sh_cpu[16], v[4], sh[3];
  int nb = 0, ns = 0;
  reps = reps > 3 ? 3 : reps;
  for (int r = 0; r < reps; r++) {
    if (making_variant(0, dir, r, v) == 0 && v[1])
      block_cpu[nb++] = v[0];
    if (r == 0 && making_variant(1, dir, r, v) == 0) {
      syn_made = v[1];
      syn_used = v[3];
    }
    if (shared_rep(dir, r, sh) == 0) {
      sh_used = sh_used && sh[0];
      sh_rand_used = sh_rand_used || sh[2];
      sh_cpu[ns++] = sh[1];
    }
  }
  printf("  critical path of a parallel PCH build (CPU ms, median of %d): making the PCH from the module %.1f, "
         "from the include block alone %.1f (%.2fx a plain compile of %.1f); a use %.1f\n",
         reps, module_make_cpu, nb ? bench_median(block_cpu, nb) : -1, nb ? bench_median(block_cpu, nb) / plain_cpu : -1,
         plain_cpu, use_cpu);
  printf("  floor of the chain (making + a use) %.2fx a plain compile: PCH at -j cores is at most %.2fx faster than "
         "no PCH where that runs two rounds of header-heavy modules (24 on 16 cores)\n",
         (module_make_cpu + use_cpu) / plain_cpu, 2 * plain_cpu / (module_make_cpu + use_cpu));
  printf("  made with -fdevice-syntax-only: made %d, used by a normal compile %d (options differ)\n", (int)syn_made,
         (int)syn_used);
  if (ns)
    printf("  another process using the PCH file (its maker alive): randomisation off %s (CPU %.1f ms), on %s\n",
           sh_used ? "used" : "refused", bench_median(sh_cpu, ns), sh_rand_used ? "used" : "refused");
  else
    printf("  another process using the PCH file: not measured (personality(ADDR_NO_RANDOMIZE) refused here?)\n");
  printf("RESULT pch_make_block_cpu=%.1f pch_make_module_cpu=%.1f pch_use_cpu=%.1f plain_cpu=%.1f "
         "pch_chain_floor=%.2f syntax_only_pch_used=%d shared_file_used_norand=%d shared_file_used_rand=%d "
         "shared_use_cpu=%.1f\n",
         nb ? bench_median(block_cpu, nb) : -1, module_make_cpu, use_cpu, plain_cpu, (module_make_cpu + use_cpu) / plain_cpu,
         (int)syn_used, ns ? (int)sh_used : -1, ns ? (int)sh_rand_used : -1, ns ? bench_median(sh_cpu, ns) : -1);
}

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
  double cpu_off[16], cpu_on[16], cpu_create[16];
  if (argc == 5 && !strcmp(argv[1], "--shared")) { /* a process of the shared-file measure */
    snprintf(cccl, sizeof(cccl), "-I%s/include/cccl", root);
    snprintf(inc, sizeof(inc), "-I%s/include", root);
    flags[nflags++] = "-arch=sm_90";
    flags[nflags++] = "--ptxas-options=-v";
    flags[nflags++] = cccl;
    flags[nflags++] = inc;
    flags[nflags++] = ""; /* the PCH dir */
    return shared_main(argv[2], argv[3], argv[4]);
  }
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
    double got[9] = {0};
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
      got[8] = last_cpu_ms;
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
    cpu_create[r] = got[8];
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
  if (nflags == 5) { /* NVRTC's own flags only: what bounds a parallel build's PCH chain */
    double mk = bench_median(cpu_create, reps), co = bench_median(cpu_off, reps), cp = bench_median(cpu_on, reps);
    fflush(stdout);
    critical_path_rows(reps, dir, mk, cp, co);
  }
  {
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
  }
}
