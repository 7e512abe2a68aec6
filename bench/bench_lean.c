/*
 * Lean modules against whole ones and nvcc's, in one run on the GPU machine: cubin bytes, module
 * load time (cuModuleLoadData + cuModuleGetFunction, median of ROUNDS, images interleaved) and
 * the whole-process compile of block_reduce (`gpujit build --no-cache`, median of COMPILES).
 *   bench_lean [ROUNDS] [COMPILES]     the table, and RESULT lines
 *   bench_lean launch CUBIN            load CUBIN and run block_sum once (for Nsight Compute)
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpujit.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/fs.h"
#include "bench_util.h"
#include "run/device.h"

typedef struct image {
  const char *name, *kernel;
  char path[512];
  gpujit__buf bytes;
  double load_us[4096];
} image;

static void load_once(gpujit_device *dev, image *im, int round)
{
  CUmodule mod;
  CUfunction fn;
  double t0 = gpujit__now_us();
  if (dev->d->cuModuleLoadData(&mod, im->bytes.data) != CUDA_SUCCESS ||
      dev->d->cuModuleGetFunction(&fn, mod, im->kernel) != CUDA_SUCCESS) {
    fprintf(stderr, "%s: cannot load\n", im->path);
    exit(1);
  }
  im->load_us[round] = gpujit__now_us() - t0;
  dev->d->cuModuleUnload(mod);
}

static int launch(const char *path)
{
  gpujit_device *dev = NULL;
  gpujit__buf bytes = {0};
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr in, out;
  int n = 256 * 64;
  void *args[] = {&n, &in, &out};
  if (gpujit_device_open(&dev, -1) < 0 || gpujit__file_read(&bytes, path) < 0) {
    fprintf(stderr, "%s\n", gpujit_error_last());
    return 1;
  }
  dev->d->cuCtxSetCurrent(dev->ctx);
  if (dev->d->cuModuleLoadData(&mod, bytes.data) != CUDA_SUCCESS ||
      dev->d->cuModuleGetFunction(&fn, mod, "block_sum") != CUDA_SUCCESS ||
      dev->d->cuMemAlloc(&in, (size_t)n * 4) != CUDA_SUCCESS || dev->d->cuMemAlloc(&out, 64 * 4) != CUDA_SUCCESS ||
      dev->d->cuMemsetD32Async(in, 0x3f800000u, (size_t)n, dev->stream) != CUDA_SUCCESS ||
      dev->d->cuLaunchKernel(fn, 64, 1, 1, 256, 1, 1, 0, dev->stream, args, NULL) != CUDA_SUCCESS ||
      dev->d->cuStreamSynchronize(dev->stream) != CUDA_SUCCESS) {
    fprintf(stderr, "%s: load or launch failed\n", path);
    return 1;
  }
  printf("block_sum ran from %s\n", path);
  return 0;
}

static double compile_ms(const char *src, const char *out, bool lean)
{
  char *argv[] = {(char *)GPUJIT_CLI, "build", "-q", "--no-cache", "--no-pch", "-o", (char *)out, (char *)src,
                  "--no-lean", NULL};
  if (lean)
    argv[8] = NULL;
  return bench_run_process(argv);
}

int main(int argc, char **argv)
{
  if (argc == 3 && strcmp(argv[1], "launch") == 0)
    return launch(argv[2]);
  int rounds = argc > 1 ? atoi(argv[1]) : 300, compiles = argc > 2 ? atoi(argv[2]) : 5;
  const char *arch = NULL, *br = GPUJIT_EXAMPLES_DIR "/block_reduce.cu", *sx = GPUJIT_EXAMPLES_DIR "/saxpy.cu";
  char dir[] = "/tmp/bench-lean-XXXXXX", cmd[2048];
  double c_lean[64], c_whole[64];
  gpujit_device *dev = NULL;
  image ims[5] = {{"block_reduce lean", "block_sum"},
                  {"block_reduce --no-lean", "block_sum"},
                  {"block_reduce nvcc -cubin -lineinfo", "block_sum"},
                  {"saxpy lean", "saxpy"},
                  {"saxpy --no-lean", "saxpy"}};
  int nim = 5;

  if (rounds < 1 || rounds > 4096 || compiles < 1 || compiles > 64 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: bench_lean [ROUNDS 1..4096] [COMPILES 1..64]\n");
    return 2;
  }
  if (gpujit_device_open(&dev, -1) < 0) { /* bytes and compile still mean something */
    printf("no load times: %s\n", gpujit_error_last());
    dev = NULL;
  }
  arch = gpujit_default_arch();
  setenv("GPUJIT_ARCH", arch, 1);
  for (int i = 0; i < compiles; i++) { /* interleaved: the machine's drift hits both alike */
    snprintf(ims[0].path, sizeof(ims[0].path), "%s/br_lean.cubin", dir);
    snprintf(ims[1].path, sizeof(ims[1].path), "%s/br_whole.cubin", dir);
    c_lean[i] = compile_ms(br, ims[0].path, true);
    c_whole[i] = compile_ms(br, ims[1].path, false);
  }
  snprintf(ims[2].path, sizeof(ims[2].path), "%s/br_nvcc.cubin", dir);
  snprintf(cmd, sizeof(cmd), "%s/bin/nvcc -cubin -lineinfo -arch=%s -o %s %s", getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda",
           arch, ims[2].path, br);
  if (system(cmd) != 0) {
    fprintf(stderr, "no nvcc cubin (%s): left out\n", cmd);
    ims[2] = ims[3], ims[3] = ims[4], nim = 4;
  }
  snprintf(ims[nim - 2].path, sizeof(ims[0].path), "%s/saxpy_lean.cubin", dir);
  snprintf(ims[nim - 1].path, sizeof(ims[0].path), "%s/saxpy_whole.cubin", dir);
  compile_ms(sx, ims[nim - 2].path, true);
  compile_ms(sx, ims[nim - 1].path, false);
  for (int i = 0; i < nim; i++)
    if (gpujit__file_read(&ims[i].bytes, ims[i].path) < 0) {
      fprintf(stderr, "%s\n", gpujit_error_last());
      return 1;
    }
  if (dev) {
    dev->d->cuCtxSetCurrent(dev->ctx);
    for (int i = 0; i < nim; i++) /* first loads warm the driver up */
      for (int w = 0; w < 5; w++)
        load_once(dev, &ims[i], 0);
    for (int r = 0; r < rounds; r++)
      for (int i = 0; i < nim; i++)
        load_once(dev, &ims[(i + r) % nim], r);
  } else {
    rounds = 1; /* the medians read the zeros: printed as "-" */
  }

  printf("Lean modules on %s (%s), load = cuModuleLoadData + cuModuleGetFunction, median of %d\n", arch,
         gpujit_version(), rounds);
  printf("%-36s %10s %12s\n", "cubin", "bytes", "load (us)");
  double load[5];
  for (int i = 0; i < nim; i++) {
    load[i] = dev ? bench_median(ims[i].load_us, rounds) : NAN;
    printf("%-36s %10zu %12.1f\n", ims[i].name, ims[i].bytes.len, load[i]);
    printf("RESULT bytes %s %zu\n", ims[i].name, ims[i].bytes.len);
    if (dev)
      printf("RESULT load_us %s %.2f\n", ims[i].name, load[i]);
  }
  double cl = bench_median(c_lean, compiles), cw = bench_median(c_whole, compiles);
  printf("\nwhole-process `gpujit build --no-cache --no-pch` of block_reduce, median of %d: lean %.1f ms, "
         "--no-lean %.1f ms\n", compiles, cl, cw);
  printf("RESULT compile_ms lean %.1f\nRESULT compile_ms whole %.1f\n", cl, cw);
  printf("\nratios (targets): block_reduce lean / nvcc bytes %.2f (<= 1.2); block_reduce lean load / saxpy "
         "lean load %.2f (<= 2); lean / --no-lean compile %.2f (<= 1.0); --no-lean / lean load %.0fx\n",
         nim == 5 ? (double)ims[0].bytes.len / (double)ims[2].bytes.len : -1.0, load[0] / load[nim - 2], cl / cw,
         load[1] / load[0]);
  for (int i = 0; i < nim; i++) {
    unlink(ims[i].path);
    gpujit__buf_free(&ims[i].bytes);
  }
  rmdir(dir);
  gpujit_device_free(dev);
  return 0;
}
