"""A gstaichi kernel (Genesis's Taichi) under gpujit profile: its front end, LLVM to PTX and the
driver's JIT of the PTX at the first launch. The script times the first call itself (OWN) and
then calls the kernel N more times."""
import sys
import time

import gstaichi as ti

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
ti.init(arch=ti.cuda, offline_cache=False)
x = ti.field(ti.f32, shape=1 << 20)


@ti.kernel
def gj_taichi_fill(s: ti.f32):
    for i in x:
        x[i] = i * s


t = time.perf_counter()
gj_taichi_fill(2.0)
ti.sync()
print("OWN gj_taichi_fill %.3f" % ((time.perf_counter() - t) * 1e3))
for _ in range(n - 1):
    gj_taichi_fill(3.0)
ti.sync()
print("calls gj_taichi_fill %d" % n)
