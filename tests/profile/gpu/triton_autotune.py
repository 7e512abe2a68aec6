"""An autotuned Triton kernel under gpujit profile: @triton.autotune over 4 configs, then N calls.
The autotuner compiles each config and benchmarks it (do_bench: many launches, and a cache-flush
kernel between runs); the program's own launches are the N calls of the chosen config.
Prints: launches gj_tuned N, CHOSEN <config>, OWN gj_tuned <ms> (Triton's own measure of the
configs' compiles, its listener), OWN_BENCH_MS <the autotuner's own bench_time>."""
import sys

import torch
import triton
import triton.language as tl

own = {}


def listener(*, src, metadata, metadata_group, times, cache_hit, **kw):
    us = times.ir_initialization + sum(t for _, t in times.lowering_stages) + times.store_results
    own[metadata["name"]] = own.get(metadata["name"], 0.0) + us / 1e3


triton.knobs.compilation.listener = listener
configs = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((256, 2), (512, 4), (1024, 4), (2048, 8))]


@triton.autotune(configs=configs, key=["n"])
@triton.jit
def gj_tuned(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2 + tl.load(y_ptr + offs, mask=mask), mask=mask)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
size = 1 << 22
x = torch.rand(size, device="cuda")
y = torch.rand(size, device="cuda")
out = torch.empty_like(x)
torch.cuda.synchronize()
for _ in range(n):
    gj_tuned[lambda meta: (triton.cdiv(size, meta["BLOCK"]),)](x, y, out, size)
torch.cuda.synchronize()
print("launches gj_tuned %d" % n)
print("CHOSEN %s" % gj_tuned.best_config)
for name, ms in own.items():
    print("OWN %s %.3f" % (name, ms))  # Triton's own measure of its 4 compiles
print("OWN_BENCH_MS %.3f" % (1e3 * (getattr(gj_tuned, "bench_time", 0) or 0)))
