// saxpy: y = a*x + y. The smallest useful kernel; used by the cache and run benchmarks.
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
