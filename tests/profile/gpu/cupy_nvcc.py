"""CuPy's nvcc backend under gpujit profile: RawModule(code, backend="nvcc") runs nvcc to a cubin
file that CuPy reads back and loads from memory, then N launches. One row: nvcc's compile and
the N launches. Prints launches gj_nvcc_scale N and OWN_NVCC_MS (CuPy's compile, timed here)."""
import sys
import time

import cupy as cp

code = r'''
extern "C" __global__ void gj_nvcc_scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + 1.0f;
}
'''
n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
t0 = time.perf_counter()
mod = cp.RawModule(code=code, backend="nvcc")
k = mod.get_function("gj_nvcc_scale")
t1 = time.perf_counter()
size = 1 << 20
x = cp.ones(size, dtype=cp.float32)
for _ in range(n):
    k(((size + 255) // 256,), (256,), (x, cp.float32(1.0001), cp.int32(size)))
cp.cuda.Device().synchronize()
print("launches gj_nvcc_scale %d" % n)
print("OWN_NVCC_MS %.3f" % ((t1 - t0) * 1e3))
