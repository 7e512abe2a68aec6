// A template kernel instantiated through name expressions:
//   gpujit build --name-expr 'scale<float>' --name-expr 'scale<double>' scale.cu
template <typename T>
__global__ void scale(int n, T factor, T *data)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= factor;
}
