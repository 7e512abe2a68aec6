"""A compile-heavy framework workload for bench/profile_overhead.py, run with and without
`gpujit profile` (its Python start-up hook and adapters included).
  jax N      N distinct jitted functions compiled by XLA (ptxas and nvlink run for each) and run once
  triton N   N specializations of one Triton kernel compiled (Triton's cache empty: $TRITON_CACHE_DIR)
             and launched once each
Prints one JSON line: the seconds of the loop, and the process's peak resident memory (KiB)."""
import json
import os
import sys
import time

mode, n = sys.argv[1], int(sys.argv[2])
if mode == "jax":
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp

    x = jnp.arange(1 << 16, dtype=jnp.float32)
    x.block_until_ready()
    t0 = time.perf_counter()
    for i in range(n):
        f = jax.jit(lambda v, i=i: jnp.sin(v * (i + 1)) + jnp.cos(v) * i)
        f(x).block_until_ready()
else:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def gj_scale(x_ptr, n_el, K: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n_el
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * K, mask=mask)

    x = torch.ones(1 << 16, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(n):
        gj_scale[(64,)](x, x.numel(), K=i + 1, BLOCK=1024)
    torch.cuda.synchronize()
loop = time.perf_counter() - t0
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"mode": mode, "n": n, "loop_s": loop, "peak_kib": peak}))
