// Kernels of a chosen length (bench/timers_vs_ncu.sh). spin_ns waits on the GPU's global timer, so
// its length does not follow the SM clock (which ncu's replays and back-to-back launches see
// differently); spin waits for SM clock cycles.
extern "C" __global__ void spin_ns(long long ns, int *out)
{
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < (unsigned long long)ns);
  if (threadIdx.x == 0)
    out[blockIdx.x] = 1;
}

extern "C" __global__ void spin(long long cycles, int *out)
{
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = 1;
}

// Bound by the SM clock, as real kernels are: every thread runs a dependent FMA chain of `iters`
// steps (528 x 256 threads fill an H100's 132 SMs with 32 warps each). Its length follows the SM
// clock alone, under a profiler or not.
extern "C" __global__ void fma_loop(int iters, float *out)
{
  float a = (float)threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f;
#pragma unroll 4
  for (int i = 0; i < iters; i++)
    a = fmaf(a, b, c);
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}
