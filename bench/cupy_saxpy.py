"""saxpy under cupyx.profiler.benchmark, to set beside `gpujit run --bench` on the same kernel.

Prints one JSON line: the GPU and CPU medians (ms) CuPy measured.
"""
import json
import sys

import cupy as cp
from cupyx.profiler import benchmark

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
src = open(sys.argv[2]).read() if len(sys.argv) > 2 else None
kernel = cp.RawKernel(src, "saxpy", options=("-lineinfo",))
x = cp.random.random(n, dtype=cp.float32)
y = cp.zeros(n, dtype=cp.float32)
block = 256
grid = (n + block - 1) // block


def run():
    kernel((grid,), (block,), (cp.int32(n), cp.float32(2.0), x, y))


res = benchmark(run, n_repeat=2000, n_warmup=10)
print(json.dumps({"gpu_median_ms": float(cp.asnumpy(cp.median(cp.asarray(res.gpu_times[0])))) * 1e3,
                  "cpu_median_ms": float(cp.median(cp.asarray(res.cpu_times))) * 1e3,
                  "samples": len(res.cpu_times)}))
