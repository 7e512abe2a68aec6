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
