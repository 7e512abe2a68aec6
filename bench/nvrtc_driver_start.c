/*
 * What NVRTC's own start of the CUDA driver costs a process that only compiles (issue 62). NVRTC
 * 13 loads libcuda.so.1 inside the process's first nvrtcCompileProgram and calls cuInit(0) and
 * cuGetExportTable (seen under gdb, and with a stand-in libcuda.so.1 that logs its calls); on a
 * machine without a driver the dlopen fails and the compile goes on. Every compiling process on a
 * GPU machine — `gpujit build`, each project worker, the build server — may so pay the driver's
 * start (150-230 ms measured elsewhere) in its first compile.
 *
 * Fresh processes of this program alternate between the two ways, round by round: "driver"
 * leaves NVRTC as it is; "refused" makes NVRTC's dlopen of libcuda fail (this executable exports
 * its own dlopen, which the dynamic linker binds NVRTC's call to), as on a machine without one.
 * Each child times its first compile of a small kernel (a cubin), then a second (PTX; no start
 * left to pay), and says whether libcuda was loaded; the parent checks the two ways gave the same
 * cubin and the same PTX (NVRTC might fit its PTX to the driver it found: the PTX would differ). The parent
 * prints medians and the spread, and RESULT lines. Without a driver both ways are the same (the
 * ratio near 1: nothing to save); a ratio well above 1 on the GPU machine is what keeping NVRTC
 * off the driver in compile-only processes would save.
 * With PARALLEL > 1 each round starts that many children at once, as a project build starts its
 * workers: whether the driver's starts queue behind one another shows in the batch's wall time
 * (the last child's end) and in the slowest child's first compile.
 * usage: nvrtc_driver_start [ROUNDS [PARALLEL]]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

static const char src[] = "extern \"C\" __global__ void k(float *x, float a) { x[threadIdx.x] *= a; }\n";
static int refusing, refused;

/* NVRTC's dlopen comes here (the executable's symbol comes first); libcuda is refused when asked. */
__attribute__((visibility("default"))) void *dlopen(const char *file, int mode)
{
  static void *(*real)(const char *, int);
  if (!real)
    real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
  if (refusing && file && strstr(file, "libcuda.so")) {
    refused++;
    return NULL;
  }
  return real(file, mode);
}

static double now_ms(clockid_t c)
{
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One compile for `arch`: its wall ms; *cpu its CPU ms; the cubin's (or, with `ptx`, the PTX's)
 * FNV-1a hash into *hash. */
static double compile(const char *arch, int ptx, double *cpu, uint64_t *hash)
{
  nvrtcProgram p;
  const char *opts[] = {arch};
  double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID), ms;
  size_t n = 0;
  char *cubin;
  if (nvrtcCreateProgram(&p, src, "k.cu", 0, NULL, NULL) != NVRTC_SUCCESS || nvrtcCompileProgram(p, 1, opts) != NVRTC_SUCCESS) {
    fprintf(stderr, "nvrtc_driver_start: the compile failed\n");
    exit(3);
  }
  ms = now_ms(CLOCK_MONOTONIC) - w0;
  *cpu = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
  if (ptx)
    nvrtcGetPTXSize(p, &n);
  else
    nvrtcGetCUBINSize(p, &n);
  *hash = 1469598103934665603ull;
  if (n && (cubin = malloc(n)) != NULL) {
    if (ptx)
      nvrtcGetPTX(p, cubin);
    else
      nvrtcGetCUBIN(p, cubin);
    for (size_t i = 0; i < n; i++)
      *hash = (*hash ^ (unsigned char)cubin[i]) * 1099511628211ull;
    free(cubin);
  }
  nvrtcDestroyProgram(&p);
  return ms;
}

/* Whether libcuda.so.1 is in the process (asked without loading it, and without the refusal). */
static int dlopen_loaded(void)
{
  int was = refusing;
  void *h;
  refusing = 0;
  h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  refusing = was;
  if (h)
    dlclose(h);
  return h != NULL;
}

/* A child: "first_ms first_cpu second_ms loaded refused cubin_hash ptx_hash" on stdout. */
static int child(int refuse)
{
  double c1, c2, first, second;
  uint64_t h1, h2;
  refusing = refuse;
  int loaded;
  first = compile("-arch=sm_90", 0, &c1, &h1);
  second = compile("-arch=compute_90", 1, &c2, &h2);
  loaded = dlopen_loaded();
  printf("%.3f %.3f %.3f %d %d %016llx %016llx\n", first, c1, second, loaded, refused, (unsigned long long)h1,
         (unsigned long long)h2);
  return 0;
}

typedef struct one_way {
  double first[64], cpu[64], second[64], slowest[64], batch[64]; /* per round; first etc. medians of its children */
  char cubin[17], ptx[17];
  int loaded, refused;
} one_way;

static double median_of(const double *v, int n)
{
  double c[64];
  memcpy(c, v, (size_t)n * sizeof(*v));
  return bench_median(c, n);
}

/* `par` children of way `w` at once; their figures into round `r` of `o`. @return 0, or -1. */
static int batch(one_way *o, int w, int r, int par)
{
  static char self[4096];
  char arg[2] = {(char)('0' + w), 0};
  double first[64], cpu[64], second[64], t0 = now_ms(CLOCK_MONOTONIC);
  int fd[64], ok = 0;
  pid_t pid[64];
  ssize_t got = self[0] ? 1 : readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (got <= 0)
    return -1;
  for (int c = 0; c < par; c++) {
    int p[2];
    if (pipe(p) < 0)
      return -1;
    if ((pid[c] = fork()) == 0) {
      dup2(p[1], 1), close(p[0]), close(p[1]);
      execl(self, self, "--child", arg, (char *)NULL);
      _exit(127);
    }
    close(p[1]);
    fd[c] = p[0];
  }
  for (int c = 0; c < par; c++) {
    char line[256] = "", h[17] = "", hp[17] = "";
    int status = 0, l = 0, n = 0;
    got = read(fd[c], line, sizeof(line) - 1);
    close(fd[c]);
    waitpid(pid[c], &status, 0);
    if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        sscanf(line, "%lf %lf %lf %d %d %16s %16s", &first[c], &cpu[c], &second[c], &l, &n, h, hp) != 7) {
      fprintf(stderr, "nvrtc_driver_start: a child failed (%s)\n", line);
      ok = -1;
      continue;
    }
    o->loaded |= l, o->refused += n;
    memcpy(o->cubin, h, sizeof(h)), memcpy(o->ptx, hp, sizeof(hp));
  }
  o->batch[r] = now_ms(CLOCK_MONOTONIC) - t0;
  o->first[r] = median_of(first, par), o->cpu[r] = median_of(cpu, par), o->second[r] = median_of(second, par);
  o->slowest[r] = first[0];
  for (int c = 1; c < par; c++)
    o->slowest[r] = first[c] > o->slowest[r] ? first[c] : o->slowest[r];
  return ok;
}

int main(int argc, char **argv)
{
  enum { DRIVER, REFUSED };
  static const char *const way[2] = {"driver", "refused"};
  static one_way o[2];
  int rounds, par;
  double m[2], c[2];
  if (argc > 2 && !strcmp(argv[1], "--child"))
    return child(atoi(argv[2]));
  rounds = argc > 1 ? atoi(argv[1]) : 9;
  par = argc > 2 ? atoi(argv[2]) : 1;
  if (rounds < 1 || rounds > 64 || par < 1 || par > 64) {
    fprintf(stderr, "usage: nvrtc_driver_start [ROUNDS 1..64 [PARALLEL 1..64]]\n");
    return 2;
  }
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < 2; k++)
      if (batch(&o[(k + r) % 2], (k + r) % 2, r, par) < 0)
        return 1;
  printf("NVRTC's first compile in a fresh process, %d at once, medians of %d alternated rounds (ms): wall "
         "(fastest..slowest round), CPU, the slowest child's, the batch's whole wall; then a second compile (PTX)\n",
         par, rounds);
  for (int w = 0; w < 2; w++) {
    double lo = o[w].first[0], hi = o[w].first[0];
    for (int r = 1; r < rounds; r++)
      lo = o[w].first[r] < lo ? o[w].first[r] : lo, hi = o[w].first[r] > hi ? o[w].first[r] : hi;
    m[w] = median_of(o[w].first, rounds), c[w] = median_of(o[w].cpu, rounds);
    printf("  %-8s first %8.2f (%7.2f..%7.2f)  CPU %8.2f  slowest %8.2f  batch %8.2f  second %7.2f  libcuda loaded: "
           "%s\n", way[w], m[w], lo, hi, c[w], median_of(o[w].slowest, rounds), median_of(o[w].batch, rounds),
           median_of(o[w].second, rounds), o[w].loaded ? "yes" : "no");
  }
  printf("RESULT nvrtc_driver_start%s driver_over_refused wall %.4f cpu %.4f first_ms %.2f %.2f refused_loads %d "
         "same_cubin %s same_ptx %s\n", par > 1 ? "_parallel" : "", m[DRIVER] / m[REFUSED], c[DRIVER] / c[REFUSED],
         m[DRIVER], m[REFUSED], o[REFUSED].refused, strcmp(o[0].cubin, o[1].cubin) ? "no" : "yes",
         strcmp(o[0].ptx, o[1].ptx) ? "no" : "yes");
  if (par > 1)
    printf("RESULT nvrtc_driver_start_batch children %d driver_ms %.2f refused_ms %.2f ratio %.4f\n", par,
           median_of(o[DRIVER].batch, rounds), median_of(o[REFUSED].batch, rounds),
           median_of(o[DRIVER].batch, rounds) / median_of(o[REFUSED].batch, rounds));
  return strcmp(o[0].cubin, o[1].cubin) || strcmp(o[0].ptx, o[1].ptx) ? 5 : 0;
}
