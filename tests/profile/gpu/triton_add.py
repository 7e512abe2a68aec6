"""A Triton kernel (from this file) under gpujit profile: Triton runs ptxas itself. The script
measures the compile as Triton does (its own compilation listener, set after import: gpujit's
adapter chains it) and prints OWN <kernel> <ms>."""
import sys

import torch
import triton
import triton.language as tl

own = {}


def listener(*, src, metadata, metadata_group, times, cache_hit, **kw):
    us = times.ir_initialization + sum(t for _, t in times.lowering_stages) + times.store_results
    own[metadata["name"]] = own.get(metadata["name"], 0.0) + us / 1e3


triton.knobs.compilation.listener = listener


@triton.jit
def gj_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
size = 1 << 20
x = torch.rand(size, device="cuda")
y = torch.rand(size, device="cuda")
out = torch.empty_like(x)
for _ in range(n):
    gj_add[(triton.cdiv(size, 1024),)](x, y, out, size, BLOCK=1024)
torch.cuda.synchronize()
print("launches gj_add %d" % n)
for name, ms in own.items():
    print("OWN %s %.3f" % (name, ms))
