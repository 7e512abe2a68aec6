// Several kernels in one module: element-wise vector operations.
extern "C" __global__ void vec_add(int n, const float *a, const float *b, float *out)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] + b[i];
}

extern "C" __global__ void vec_mul(int n, const float *a, const float *b, float *out)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] * b[i];
}

extern "C" __global__ void vec_fill(int n, float value, float *out)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = value;
}
