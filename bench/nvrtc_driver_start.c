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
 * usage: nvrtc_driver_start [ROUNDS]
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

int main(int argc, char **argv)
{
  enum { DRIVER, REFUSED };
  static const char *const way[2] = {"driver", "refused"};
  static double first[2][64], cpu[2][64], second[2][64];
  char hash[2][17] = {"", ""}, ptx[2][17] = {"", ""};
  int loaded[2] = {0, 0}, nrefused = 0, rounds;
  if (argc > 2 && !strcmp(argv[1], "--child"))
    return child(atoi(argv[2]));
  rounds = argc > 1 ? atoi(argv[1]) : 9;
  if (rounds < 1 || rounds > 64) {
    fprintf(stderr, "usage: nvrtc_driver_start [ROUNDS 1..64]\n");
    return 2;
  }
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < 2; k++) {
      int w = (k + r) % 2, fd[2], status = 0, l = 0, n = 0;
      char self[4096], arg[2] = {(char)('0' + w), 0}, line[256] = "", h[17] = "", hp[17] = "";
      ssize_t got = readlink("/proc/self/exe", self, sizeof(self) - 1);
      pid_t pid;
      if (got <= 0 || pipe(fd) < 0)
        return 1;
      self[got] = '\0';
      if ((pid = fork()) == 0) {
        dup2(fd[1], 1), close(fd[0]), close(fd[1]);
        execl(self, self, "--child", arg, (char *)NULL);
        _exit(127);
      }
      close(fd[1]);
      got = read(fd[0], line, sizeof(line) - 1);
      close(fd[0]);
      waitpid(pid, &status, 0);
      if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
          sscanf(line, "%lf %lf %lf %d %d %16s %16s", &first[w][r], &cpu[w][r], &second[w][r], &l, &n, h, hp) != 7) {
        fprintf(stderr, "nvrtc_driver_start: a child failed (%s)\n", line);
        return 1;
      }
      loaded[w] |= l, nrefused += n;
      memcpy(hash[w], h, sizeof(h)), memcpy(ptx[w], hp, sizeof(hp));
    }
  printf("NVRTC's first compile in a fresh process, medians of %d alternated rounds (ms): wall (fastest..slowest), CPU, "
         "then a second compile (PTX)\n", rounds);
  for (int w = 0; w < 2; w++) {
    double lo = first[w][0], hi = first[w][0];
    for (int r = 1; r < rounds; r++)
      lo = first[w][r] < lo ? first[w][r] : lo, hi = first[w][r] > hi ? first[w][r] : hi;
    printf("  %-8s first %8.2f (%7.2f..%7.2f)  CPU %8.2f  second %7.2f  libcuda loaded: %s\n", way[w],
           bench_median(first[w], rounds), lo, hi, bench_median(cpu[w], rounds), bench_median(second[w], rounds),
           loaded[w] ? "yes" : "no");
  }
  printf("RESULT nvrtc_driver_start driver_over_refused wall %.4f cpu %.4f first_ms %.2f %.2f refused_loads %d "
         "same_cubin %s same_ptx %s\n",
         bench_median(first[DRIVER], rounds) / bench_median(first[REFUSED], rounds),
         bench_median(cpu[DRIVER], rounds) / bench_median(cpu[REFUSED], rounds), bench_median(first[DRIVER], rounds),
         bench_median(first[REFUSED], rounds), nrefused, strcmp(hash[0], hash[1]) ? "no" : "yes",
         strcmp(ptx[0], ptx[1]) ? "no" : "yes");
  return strcmp(hash[0], hash[1]) || strcmp(ptx[0], ptx[1]) ? 5 : 0;
}
