"""CuPy under gpujit profile: a RawKernel and an ElementwiseKernel, N launches each.
Usage: python3 cupy_kernels.py [N]. Prints the launches it made, for the test to compare."""
import sys

import cupy as cp

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
size = 1 << 20
x = cp.ones(size, dtype=cp.float32)
raw = cp.RawKernel(r'''
extern "C" __global__ void gj_scale2(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}''', "gj_scale2")
for _ in range(n):
    raw((size // 256,), (256,), (x, cp.int32(size)))
ew = cp.ElementwiseKernel("float32 a", "float32 b", "b = a * 3.0f + 1.0f", "gj_axpb")
y = cp.empty_like(x)
for _ in range(n):
    ew(x, y)
cp.cuda.Device().synchronize()
print("launches gj_scale2 %d gj_axpb %d" % (n, n))
