"""A PyTorch MLP training loop for bench/profile_overhead.py, run plain, under `gpujit profile` and
under torch.profiler: small layers and a small batch, so its time is mostly launches (forward,
backward, Adam) as a profiler's per-launch cost shows it. Every GPU call of the process is inside
run(), so torch.profiler's count of kernels (--torch-profiler) is the process's whole count, the
one `gpujit profile` must report.

    python3 profile_mlp.py [STEPS] [--torch-profiler [--names]]

Prints one JSON line: loop_s (the timed steps, synchronized), steps, kernels (torch.profiler's
count of CUDA kernels, with --torch-profiler), peak_kib; with --names also by_name, torch.profiler's
count of each kernel name (bench/profile_overhead.py compares it with the profile's when the totals
differ)."""
import json
import sys
import time

import torch

steps = next((int(a) for a in sys.argv[1:] if a.isdigit()), 300)
with_profiler = "--torch-profiler" in sys.argv[1:]
WARMUP = 10  # cuBLAS handles and workspaces, Adam's state: made before the timed loop


def run():
    torch.manual_seed(0)
    layers = [torch.nn.Linear(512, 1024), torch.nn.ReLU()]
    for _ in range(3):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(1024, 10)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(64, 512, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


torch.cuda.init()
kernels = None
if with_profiler:
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        loop = run()
    names = [e.name for e in prof.events() if e.device_type == DeviceType.CUDA and not e.name.startswith(("Memcpy", "Memset"))]
    kernels = len(names)
else:
    loop = run()
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
out = {"loop_s": loop, "steps": steps, "kernels": kernels, "peak_kib": peak}
if with_profiler and "--names" in sys.argv[1:]:
    out["by_name"] = {n: names.count(n) for n in sorted(set(names))}
print(json.dumps(out))
