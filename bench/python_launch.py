"""Host time of one kernel launch from Python: gpujit's Kernel call against CuPy's RawKernel
call on the same saxpy (same cubin, same arguments), side by side in one process, alternating
rounds; medians of per-call times. Prints a JSON line.

    python3 bench/python_launch.py [calls-per-round] [rounds]"""
import json
import statistics
import sys
import time

import cupy as cp
import numpy as np

import gpujit

SRC = r'''extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
template <typename T> __global__ void axpy(int n, T a, const T *x, T *y)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
'''


def per_call_us(launch, calls):
    launch()
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        launch()
    t1 = time.perf_counter()
    cp.cuda.Device().synchronize()
    return (t1 - t0) / calls * 1e6


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    m = gpujit.build(source=SRC, name="launch_bench.cu", name_expressions=["axpy<float>"])
    raw = cp.RawModule(code=SRC, options=("-std=c++17",)).get_function("saxpy")
    n = 256
    x = cp.ones(n, dtype=cp.float32)
    y = cp.zeros(n, dtype=cp.float32)
    n32, a32 = np.int32(n), np.float32(1.0)
    ours_np = m.kernel("saxpy")
    ours_typed = m.kernel("axpy<float>")
    cases = {
        "cupy RawKernel (NumPy scalars)": lambda: raw((1,), (256,), (n32, a32, x, y)),
        "gpujit extern C (NumPy scalars)": lambda: ours_np(1, 256, n32, a32, x, y),
        "gpujit C++ kernel (Python scalars)": lambda: ours_typed(1, 256, n, 1.0, x, y),
    }
    times = {k: [] for k in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            times[name].append(per_call_us(fn, calls))
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med["cupy RawKernel (NumPy scalars)"]
    for k, v in med.items():
        print("%-36s %7.3f us/launch  (%.3fx CuPy)" % (k, v, v / base))
    print(json.dumps({"calls": calls, "rounds": rounds, "median_us": med,
                      "ratio_extern_c": med["gpujit extern C (NumPy scalars)"] / base,
                      "ratio_typed": med["gpujit C++ kernel (Python scalars)"] / base}))


if __name__ == "__main__":
    main()
