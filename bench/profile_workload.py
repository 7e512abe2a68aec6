"""A CuPy workload for bench/profile_overhead.py, run with and without `gpujit profile`.
  launches N   N launches of a small RawKernel (one block), after one warm-up launch
  compiles N   N distinct RawKernels compiled (CuPy's on-disk cache is empty: $CUPY_CACHE_DIR) and
               launched once each
Prints one JSON line: the seconds of the loop, and the process's peak resident memory (KiB)."""
import json
import sys
import time

import cupy as cp

mode, n = sys.argv[1], int(sys.argv[2])
x = cp.zeros(256, dtype=cp.float32)
src = r'''extern "C" __global__ void gj_small%s(float *x) { x[threadIdx.x] += %s; }'''
if mode == "launches":
    k = cp.RawKernel(src % ("", "1.0f"), "gj_small")
    k((1,), (256,), (x,))
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        k((1,), (256,), (x,))
    cp.cuda.Device().synchronize()
else:
    t0 = time.perf_counter()
    for i in range(n):
        k = cp.RawKernel(src % (i, "%d.0f" % i), "gj_small%d" % i)
        k((1,), (256,), (x,))
    cp.cuda.Device().synchronize()
loop = time.perf_counter() - t0
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"mode": mode, "n": n, "loop_s": loop, "peak_kib": peak}))
