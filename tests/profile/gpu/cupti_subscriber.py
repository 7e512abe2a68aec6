"""A program that takes CUPTI itself, through the shared libcupti (as CUPTI-based tools in Python
do, with ctypes): under `gpujit profile` its cuptiSubscribe must succeed, gpujit stepping aside.
N launches of gj_before are made before it subscribes, N of gj_after (compiled and loaded after).
Usage: python3 cupti_subscriber.py [N]. Exits 3 when the subscription failed."""
import ctypes
import os
import sys

import cupy as cp

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
x = cp.zeros(256, dtype=cp.float32)
src = 'extern "C" __global__ void %s(float *x) { x[threadIdx.x] += 1.0f; }'
before = cp.RawKernel(src % "gj_before", "gj_before")
for _ in range(n):
    before((1,), (256,), (x,))
cp.cuda.Device().synchronize()
cupti = ctypes.CDLL(os.environ.get("GPUJIT_CUPTI_LIBRARY") or "libcupti.so")
Callback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p)
on_call = Callback(lambda *a: None)
sub = ctypes.c_void_p()
r = cupti.cuptiSubscribe(ctypes.byref(sub), on_call, None)
print("cuptiSubscribe result %d" % r)
after = cp.RawKernel(src % "gj_after", "gj_after")
for _ in range(n):
    after((1,), (256,), (x,))
cp.cuda.Device().synchronize()
if r == 0:
    cupti.cuptiUnsubscribe(sub)
sys.exit(0 if r == 0 else 3)
