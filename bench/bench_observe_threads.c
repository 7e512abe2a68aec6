/*
 * Compiles on two threads at once, observed against raw: each thread runs the same N small NVRTC
 * compiles, first one thread alone, then two side by side; the ratio (two threads' wall time over
 * one's) is taken for gpujit's observed compile and for raw NVRTC calls — the very library gpujit
 * loaded, on threads gpujit observes nothing on — in the same alternated rounds. Observing must not
 * make compiles take turns (issue 57: 1.94x observed where raw NVRTC took 1.05x). Run it again with
 * GPUJIT_BENCH_OBSERVE=0 for gpujit's same compiles unobserved (its flags, PCH planning and reads are not
 * raw NVRTC's): observing's own share is the difference of those two ratios. Needs 2+ CPUs to mean
 * anything; it says how many it may use.
 * Usage: bench_observe_threads [ROUNDS [COMPILES]]. Prints a table and RESULT lines.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "compile/nvrtc/nvrtc.h"
#include "compile/toolkit/toolkit.h"

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef int (*destroy_fn)(void **);
static create_fn raw_create;
static compile_fn raw_compile;
static destroy_fn raw_destroy;
static int per_thread = 6;

static const char source[] =
    "template <int N> __device__ float poly(float x) { return poly<N - 1>(x) * x + N; }\n"
    "template <> __device__ float poly<0>(float x) { return 1; }\n"
    "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = poly<64>(x[threadIdx.x]); }\n";

static void observed_once(void)
{
  gpujit__strvec flags = {0};
  gpujit__nvrtc_result res = {0};
  gpujit__nvrtc_request req = {0};
  gpujit__strvec_push(&flags, "-arch=compute_90");
  req.source = source;
  req.program_name = "k.cu";
  req.flags = &flags;
  req.output = GPUJIT_OUTPUT_PTX;
  if (gpujit__nvrtc_compile(&res, &req) != 0) {
    fprintf(stderr, "compile failed: %s\n", gpujit_error_last());
    exit(1);
  }
  gpujit__nvrtc_result_free(&res);
  gpujit__strvec_free(&flags);
}

static void raw_once(void)
{
  void *prog = NULL;
  const char *opts[] = {"-arch=compute_90"};
  raw_create(&prog, source, "k.cu", 0, NULL, NULL);
  if (raw_compile(prog, 1, opts) != 0) {
    fprintf(stderr, "raw compile failed\n");
    exit(1);
  }
  raw_destroy(&prog);
}

static void *worker(void *arg)
{
  bool observed = arg != NULL;
  for (int i = 0; i < per_thread; i++)
    observed ? observed_once() : raw_once();
  return NULL;
}

/* Wall ms of `threads` threads each doing the compiles. */
static double timed(bool observed, int threads)
{
  pthread_t t[2];
  double t0 = gpujit__now_us();
  for (int i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, worker, observed ? (void *)1 : NULL);
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  return (gpujit__now_us() - t0) / 1e3;
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 7;
  double t[2][2][64], m[2][2]; /* [observed][threads-1][round] */
  void *h;
  cpu_set_t cpus;
  const char *obs = getenv("GPUJIT_BENCH_OBSERVE");
  bool off = obs && !strcmp(obs, "0");
  if (argc > 2)
    per_thread = atoi(argv[2]);
  if (rounds < 1 || rounds > 64 || per_thread < 1) {
    fprintf(stderr, "usage: bench_observe_threads [ROUNDS 1..64 [COMPILES]]\n");
    return 2;
  }
  observed_once(); /* loads NVRTC and rebinds its imports */
  if (!(h = dlopen(gpujit__nvrtc_library_path(), RTLD_NOW | RTLD_NOLOAD)) ||
      !(raw_create = (create_fn)dlsym(h, "nvrtcCreateProgram")) ||
      !(raw_compile = (compile_fn)dlsym(h, "nvrtcCompileProgram")) ||
      !(raw_destroy = (destroy_fn)dlsym(h, "nvrtcDestroyProgram"))) {
    fprintf(stderr, "NVRTC as gpujit loaded it cannot be called directly\n");
    return 1;
  }
  raw_once();
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < 4; k++) { /* the order turns each round */
      int which = (k + r) % 4, obs = which / 2, threads = which % 2 + 1;
      t[obs][threads - 1][r] = timed(obs, threads);
    }
  sched_getaffinity(0, sizeof(cpus), &cpus);
  printf("%d compiles a thread, one thread then two at once; medians of %d rounds; %d CPUs usable\n", per_thread,
         rounds, CPU_COUNT(&cpus));
  printf("%-10s %12s %12s %8s\n", "", "1 thread", "2 threads", "ratio");
  for (int o = 0; o < 2; o++) {
    m[o][0] = bench_median(t[o][0], rounds);
    m[o][1] = bench_median(t[o][1], rounds);
    printf("%-10s %9.1f ms %9.1f ms %7.3fx\n", o ? (off ? "gpujit, unobserved" : "gpujit, observed") : "raw NVRTC",
           m[o][0], m[o][1], m[o][1] / m[o][0]);
  }
  printf("RESULT two_threads%s raw %.4f gpujit %.4f\n", off ? "_unobserved" : "", m[0][1] / m[0][0], m[1][1] / m[1][0]);
  return 0;
}
