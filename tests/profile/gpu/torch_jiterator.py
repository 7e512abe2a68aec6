"""PyTorch's jiterator under gpujit profile: one fused kernel compiled at run time, N launches."""
import sys

import torch
from torch.cuda.jiterator import _create_jit_fn

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
fn = _create_jit_fn("template <typename T> T gj_fused(T x, T y) { return -x * y + x - y; }")
a = torch.rand(1 << 20, device="cuda")
b = torch.rand(1 << 20, device="cuda")
for _ in range(n):
    c = fn(a, b)
torch.cuda.synchronize()
print("launches gj_fused %d" % n)
