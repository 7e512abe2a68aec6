/* What bench/launch_storm.c and bench/cupti_floor.c share: the driver's errors fatal, and one empty
 * kernel compiled with NVRTC for device 0 and loaded in its primary context. */
#ifndef GPUJIT_BENCH_EMPTY_KERNEL_H
#define GPUJIT_BENCH_EMPTY_KERNEL_H

#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

#define CU(x)                                                                                                          \
  do {                                                                                                                 \
    CUresult r_ = (x);                                                                                                 \
    if (r_ != CUDA_SUCCESS) {                                                                                          \
      const char *s_ = NULL;                                                                                           \
      cuGetErrorString(r_, &s_);                                                                                       \
      fprintf(stderr, "%s: %s\n", #x, s_ ? s_ : "?");                                                                  \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

/* gj_empty(int *x) on device 0, its context current; exits naming what failed. */
static inline CUfunction empty_kernel(void)
{
  const char *src = "extern \"C\" __global__ void gj_empty(int *x) { if (x) x[threadIdx.x] = 1; }\n";
  char arch[64];
  const char *opts[] = {arch};
  int major = 0, minor = 0;
  size_t size = 0;
  char *cubin;
  nvrtcProgram p;
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  CU(cuInit(0));
  CU(cuDeviceGet(&dev, 0));
  CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  snprintf(arch, sizeof(arch), "--gpu-architecture=sm_%d%d", major, minor);
  if (nvrtcCreateProgram(&p, src, "gj_empty", 0, NULL, NULL) != NVRTC_SUCCESS ||
      nvrtcCompileProgram(p, 1, opts) != NVRTC_SUCCESS || nvrtcGetCUBINSize(p, &size) != NVRTC_SUCCESS ||
      !(cubin = malloc(size)) || nvrtcGetCUBIN(p, cubin) != NVRTC_SUCCESS) {
    fprintf(stderr, "NVRTC failed to compile gj_empty\n");
    exit(1);
  }
  nvrtcDestroyProgram(&p);
  CU(cuModuleLoadData(&mod, cubin));
  free(cubin);
  CU(cuModuleGetFunction(&f, mod, "gj_empty"));
  return f;
}

#endif
