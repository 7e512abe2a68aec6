"""A PyTorch MLP training loop marked in steps (tests/profile/gpu/steps.py): each step a forward,
backward and Adam step, synchronized; the step marked by torch.profiler's step() (--torch-profiler
SCHEDULE, printing the steps its schedule recorded), by an NVTX mark named "step" (--nvtx) or by
the profile's step entry point (--api: what gpujit.step() calls).
Prints one JSON line: seconds (the loop), steps, recorded (torch.profiler's RECORD steps)."""
import json
import sys
import time

import torch

steps = int(sys.argv[1])
args = sys.argv[2:]
torch.manual_seed(0)
layers = [torch.nn.Linear(512, 1024), torch.nn.ReLU()]
for _ in range(3):
    layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(1024, 10)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = torch.nn.CrossEntropyLoss()
x = torch.randn(64, 512, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")
recorded = []


def one():
    opt.zero_grad(set_to_none=True)
    loss_fn(model(x), y).backward()
    opt.step()
    torch.cuda.synchronize()


for _ in range(5):  # cuBLAS handles, Adam's state
    one()
if "--torch-profiler" in args:
    spec = dict(kv.split("=") for kv in args[args.index("--torch-profiler") + 1].split(","))
    sched = torch.profiler.schedule(**{k: int(v) for k, v in spec.items()})
    recorded = [i for i in range(steps) if sched(i).name.startswith("RECORD")]
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], schedule=sched)
    prof.__enter__()
    t0 = time.perf_counter()
    for _ in range(steps):
        one()
        prof.step()
    seconds = time.perf_counter() - t0
    prof.__exit__(None, None, None)
else:
    mark = None
    if "--api" in args:  # the step entry point gpujit.step() reaches, where a profile preloaded it
        import ctypes
        mark = getattr(ctypes.CDLL(None), "gpujit_inject_step", None)
    t0 = time.perf_counter()
    for _ in range(steps):
        one()
        if "--nvtx" in args:
            torch.cuda.nvtx.mark("step")
        elif mark:
            mark(0)
    seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "steps": steps, "recorded": recorded}))
