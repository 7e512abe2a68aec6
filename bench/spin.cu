// A kernel of a chosen length: every block spins for `cycles` SM clock cycles (bench/timers_vs_ncu.sh).
extern "C" __global__ void spin(long long cycles, int *out)
{
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = 1;
}
