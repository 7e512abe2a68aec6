"""PyTorch's own profiler inside `gpujit profile`: the program takes CUPTI, gpujit steps aside,
and the program's profiler must see every launch it would see without gpujit. The jiterator
kernel is first compiled and loaded inside the profiled region (after CUPTI changed hands).
Usage: python3 torch_profiler.py [N]. Exits 3 when its profiler missed launches."""
import sys

import torch
from torch.cuda.jiterator import _create_jit_fn
from torch.profiler import ProfilerActivity, profile

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
a = torch.rand(1 << 20, device="cuda")
b = torch.rand(1 << 20, device="cuda")
torch.cuda.synchronize()
fn = _create_jit_fn("template <typename T> T gj_prof(T x, T y) { return x * y - x; }")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(n):
        c = fn(a, b)
    torch.cuda.synchronize()
seen = sum(e.count for e in prof.key_averages() if "gj_prof" in e.key and e.device_type == torch.autograd.DeviceType.CUDA)
print("torch profiler saw gj_prof %d of %d" % (seen, n))
sys.exit(0 if seen == n else 3)
