// Phase timing inside a kernel with gpujit's regions: the pattern of the Genesis/gstaichi guide
// (an enum of phases, clock counters read around each, differences stored from one block and
// averaged on the host) written as named regions. Build or run with --regions to record them:
//
//   gpujit run --regions examples/phase_timing.cu --grid 1024 --block 128 \
//     --arg i32:131072 --arg i32:8 --arg buf:f32:131072:random --arg buf:f32:131072:zeros,out=checksum
//
// Without --regions the macros are empty and the kernel is the same, instruction for instruction.
#include <gpujit/regions.cuh>

// Stand-ins for a solver's phases: each does a little arithmetic on the element it owns.
static __device__ float line_search(float x, float g)
{
  float a = 1.0f;
  for (int k = 0; k < 16 && a * g * g > 1e-6f; k++)
    a *= 0.5f + 0.25f * __sinf(x + k);
  return x - a * g;
}

static __device__ float hessian_incremental(float x)
{
  float h = 0.0f;
  for (int k = 0; k < 32; k++)
    h += __expf(-x * x * (float)(k + 1) * 1e-3f);
  return h;
}

extern "C" __global__ void solve(int n, int iterations, const float *x0, float *x)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x0[i], g = 0.0f, h = 1.0f;
  for (int it = 0; it < iterations; it++) {
    GPUJIT_REGION("line_search") { v = line_search(v, g); }
    GPUJIT_REGION("update_constraint") { v = fminf(fmaxf(v, -4.0f), 4.0f); }
    GPUJIT_REGION("hessian_incremental") { h = hessian_incremental(v); }
    GPUJIT_REGION("update_gradient") { g = (v - 0.5f) / h; }
  }
  x[i] = v;
}
