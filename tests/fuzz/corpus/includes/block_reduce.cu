// A header-heavy module: CUB's BlockReduce from the toolkit's CCCL headers.
// Each block sums its tile; block sums land in partial[blockIdx.x].
#include <cub/block/block_reduce.cuh>

constexpr int kThreads = 256;

extern "C" __global__ void block_sum(int n, const float *in, float *partial)
{
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  int i = blockIdx.x * kThreads + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  float sum = Reduce(storage).Sum(v);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = sum;
}
