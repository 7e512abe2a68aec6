/*
 * Many launches of an empty kernel through the driver API, as fast as the host issues them: where
 * a profiler's cost per launch shows most (bench/profile_overhead.py runs it side by side with and
 * without `gpujit profile`, and with ten million launches for its bounded-memory check). The
 * kernel is compiled with NVRTC for the device. Prints one JSON line: launches, seconds (the loop
 * and the synchronize after it), issue_seconds (the loop alone: the host's side; when it is close
 * to `seconds` the GPU kept up, or the host waited for room in the launch queue), and the
 * process's peak resident memory.
 * Usage: launch_storm [LAUNCHES]
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CU(x)                                                                                                          \
  do {                                                                                                                 \
    CUresult r_ = (x);                                                                                                 \
    if (r_ != CUDA_SUCCESS) {                                                                                          \
      const char *s_ = NULL;                                                                                           \
      cuGetErrorString(r_, &s_);                                                                                       \
      fprintf(stderr, "launch_storm: %s: %s\n", #x, s_ ? s_ : "?");                                                    \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

static long peak_kib(void)
{
  char line[256];
  long kib = -1;
  FILE *f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof(line), f))
    if (!strncmp(line, "VmHWM:", 6))
      kib = atol(line + 6);
  if (f)
    fclose(f);
  return kib;
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 10000000;
  const char *src = "extern \"C\" __global__ void gj_empty(int *x) { if (x) x[threadIdx.x] = 1; }\n";
  char arch[64];
  int major = 0, minor = 0;
  size_t size = 0;
  char *cubin;
  nvrtcProgram p;
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  int *none = NULL;
  void *args[] = {&none};
  struct timespec t0, t1, t2;
  CU(cuInit(0));
  CU(cuDeviceGet(&dev, 0));
  CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  snprintf(arch, sizeof(arch), "--gpu-architecture=sm_%d%d", major, minor);
  {
    const char *opts[] = {arch};
    if (nvrtcCreateProgram(&p, src, "gj_empty", 0, NULL, NULL) != NVRTC_SUCCESS ||
        nvrtcCompileProgram(p, 1, opts) != NVRTC_SUCCESS || nvrtcGetCUBINSize(p, &size) != NVRTC_SUCCESS) {
      fprintf(stderr, "launch_storm: NVRTC failed\n");
      return 1;
    }
  }
  cubin = malloc(size);
  nvrtcGetCUBIN(p, cubin);
  nvrtcDestroyProgram(&p);
  CU(cuModuleLoadData(&mod, cubin));
  CU(cuModuleGetFunction(&f, mod, "gj_empty"));
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; i++)
    CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
  clock_gettime(CLOCK_MONOTONIC, &t2);
  CU(cuCtxSynchronize());
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("{\"launches\": %ld, \"seconds\": %.4f, \"issue_seconds\": %.4f, \"peak_kib\": %ld}\n", n,
         (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
         (double)(t2.tv_sec - t0.tv_sec) + (double)(t2.tv_nsec - t0.tv_nsec) / 1e9, peak_kib());
  free(cubin);
  return 0;
}
