"""torch.compile of a small function under gpujit profile: Dynamo, AOTAutograd, Inductor and
Triton (in the process or in compile workers). The script prints the compile as PyTorch measures
it (its compilation metrics: OWN frame <ms>), then calls the compiled function N times."""
import sys

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100


def fn(x):
    return torch.sin(x) * 2 + torch.cos(x)


c = torch.compile(fn)
x = torch.rand(1 << 20, device="cuda")
for _ in range(n):
    y = c(x)
torch.cuda.synchronize()
from torch._dynamo.utils import get_compilation_metrics  # noqa: E402

print("calls fn %d" % n)
for m in get_compilation_metrics():
    if getattr(m, "entire_frame_compile_time_s", None):
        print("OWN frame %.3f" % (m.entire_frame_compile_time_s * 1e3))
