"""A CuPy program using two GPUs under gpujit profile: the same RawKernel launched N times on
device 0 and N times on device 1. Usage: python3 two_gpus.py [N]. Prints what it launched."""
import sys

import cupy as cp

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
src = 'extern "C" __global__ void gj_both(float *x) { x[threadIdx.x] += 1.0f; }'
for dev in (0, 1):
    with cp.cuda.Device(dev):
        x = cp.zeros(256, dtype=cp.float32)
        k = cp.RawKernel(src, "gj_both")
        for _ in range(n):
            k((1,), (256,), (x,))
        cp.cuda.Device(dev).synchronize()
        assert float(x[0]) == n
print("launches gj_both device0 %d device1 %d" % (n, n))
