// Two-file module, part 1: the kernel calls a device function defined in helper.cu.
// Build both together: gpujit build lto/main.cu lto/helper.cu (compiled to LTO-IR, linked by nvJitLink).
#include "helper.h"

extern "C" __global__ void polynomial(int n, const float *x, float *y)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = horner(x[i]);
}
