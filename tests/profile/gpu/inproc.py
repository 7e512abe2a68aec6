"""GPU checks of gpujit.profile in a plain ``python app.py`` (issue 58 item 4), run by scripts/gpu.sh
(part `inproc`), each program in a fresh interpreter not started by `gpujit profile`:

1. a PyTorch MLP training loop (forward, backward, Adam, synchronize; then p.step()) under
   ``gpujit.profile(schedule=gpujit.schedule(wait=80, warmup=3, active=1))``: the one active step is
   step 83, as torch.profiler.schedule chooses it; its kernels are the program's own for one step
   (counted by torch.profiler's kernel events of one step, in a process of its own); its wall time
   within 2 % of the program's own measure; busy time plus gaps equal each stream's span; a
   jiterator kernel compiled inside the block is seen (PyTorch's lazy NVRTC, resolved through dlsym);
2. a CuPy RawKernel loop (200 launches a step, synchronize, p.step()), same schedule: the active
   step's kernels and launches are exactly 200; its wall time within 2 %; a RawKernel compiled
   inside the block is seen (CuPy's NVRTC, resolved before the block and rebound by value);
3. both: export_chrome_trace writes valid JSON with the step's kernels; the notes say what an
   in-process profile does not see, and nothing says the GPU was not recorded;
4. what entering and leaving a block costs in a PyTorch process (CUDA up, a jiterator kernel used
   before the block, so PyTorch's lazy NVRTC table in libtorch_cuda's data holds NVRTC's own
   functions): each part of the entry timed, and the injection library's measuring note
   (GPUJIT_BENCH_REBIND) read — the default, which reads only the pages the process wrote, against
   the former scan of every page (GPUJIT_BENCH_REBIND=full), each in a fresh process; in both a
   jiterator kernel compiled inside the block is seen (through that table, rebound by value).
Usage: python3 inproc.py [OUTDIR]. Prints CHECK and RESULT lines; exits 1 when a check fails, 0
with SKIP lines where PyTorch or CuPy (or a GPU) is missing."""
import json
import os
import subprocess
import sys
import tempfile

out = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="inproc-")
os.makedirs(out, exist_ok=True)
failed = 0

COMMON = r'''
import json, os, sys, time
import gpujit
WAIT, WARMUP, ACTIVE = 80, 3, 1
STEPS = WAIT + WARMUP + ACTIVE + 3


def report(p, marks, extra):
    """marks[k]: perf_counter just before the program's k-th p.step() (k from 1); step n of the
    profile runs from boundary n to boundary n + 1."""
    s = p.steps
    own = {n: (marks[n + 1] - marks[n]) * 1e3 for n in range(1, len(marks) - 1)}
    print(json.dumps({"steps": [{k: v for k, v in x.items() if k not in ("summary",)} for x in s],
                      "own_ms": own, "notes": p.notes, "totals": p.totals,
                      "compiles": [c["name"] for c in p.data["compiles"] if c["kind"] == "nvrtc"], **extra}))
'''

MLP = COMMON + r'''
import torch
mode = sys.argv[1]
torch.manual_seed(0)
layers = [torch.nn.Linear(512, 1024), torch.nn.ReLU()]
for _ in range(3):
    layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(1024, 10)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = torch.nn.CrossEntropyLoss()
x = torch.randn(64, 512, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")


def one():
    opt.zero_grad(set_to_none=True)
    loss_fn(model(x), y).backward()
    opt.step()
    torch.cuda.synchronize()


for _ in range(5):  # cuBLAS handles, Adam's state
    one()
if mode == "count":  # the program's own kernels of one step, by torch.profiler, in a process of its own
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        one()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
    chosen = [i for i in range(STEPS) if torch.profiler.schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE,
                                                                repeat=1)(i).name.startswith("RECORD")]
    print(json.dumps({"kernels": len(kernels), "chosen": chosen}))
    sys.exit(0)
marks = [None]
t_enter = time.perf_counter()
with gpujit.profile(schedule=gpujit.schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1)) as p:
    enter_ms = (time.perf_counter() - t_enter) * 1e3  # loading, rebinding, the adapters
    for i in range(STEPS):
        if i == 10:  # a jiterator kernel compiled in a wait step: CUPTI is off, the compile is seen all the same
            fn = torch.cuda.jiterator._create_jit_fn("template <typename T> T inproc_twice(T a) { return a * 2; }")
            fn(x)
            torch.cuda.synchronize()
        one()
        marks.append(time.perf_counter())
        p.step()
p.export_chrome_trace(sys.argv[2])
report(p, marks, {"enter_ms": enter_ms})
'''

CUPY = COMMON + r'''
import cupy
PER = 200
cupy.cuda.runtime.deviceSynchronize()
before = cupy.RawKernel(r'extern "C" __global__ void inproc_before(float *x) { x[threadIdx.x] += 1; }',
                        "inproc_before")
a = cupy.zeros(256, dtype=cupy.float32)
before((1,), (256,), (a,))  # NVRTC loaded and resolved by CuPy before the block
marks = [None]
t_enter = time.perf_counter()
with gpujit.profile(schedule=gpujit.schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1)) as p:
    enter_ms = (time.perf_counter() - t_enter) * 1e3
    inside = cupy.RawKernel(r'extern "C" __global__ void inproc_inside(float *x) { x[threadIdx.x] *= 1.0001f; }',
                            "inproc_inside")
    inside.compile()
    for i in range(STEPS):
        for _ in range(PER):
            inside((1,), (256,), (a,))
        cupy.cuda.runtime.deviceSynchronize()
        marks.append(time.perf_counter())
        p.step()
p.export_chrome_trace(sys.argv[1])
report(p, marks, {"per": PER, "enter_ms": enter_ms})
'''


ENTER = COMMON + r'''
import re
import torch
import gpujit._profile as gp
x = torch.randn(1024, device="cuda")
before = torch.cuda.jiterator._create_jit_fn("template <typename T> T inproc_before(T a) { return a + 1; }")
before(x)  # PyTorch's lazy NVRTC resolved now, before the block: its table holds NVRTC's own functions
torch.cuda.synchronize()
parts = {}


def timed(name, f):
    def run(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            parts[name] = parts.get(name, 0.0) + (time.perf_counter() - t) * 1e3
    return run


class Timed:  # the C extension's entry points, timed
    def __init__(self, m):
        self._m = m

    def __getattr__(self, n):
        v = getattr(self._m, n)
        return timed(n, v) if n in ("profile_start", "profile_stop") else v


gp._gpujit = Timed(gp._gpujit)
for n in ("_ctypes_reals", "_ctypes_rebind", "_ctypes_put_back", "_start_adapters", "_torch_profiler_recording"):
    setattr(gp, n, timed(n, getattr(gp, n)))
t_enter = time.perf_counter()
with gpujit.profile(schedule=gpujit.schedule(wait=1, warmup=1, active=1, repeat=1)) as p:
    enter_ms = (time.perf_counter() - t_enter) * 1e3
    inside = torch.cuda.jiterator._create_jit_fn("template <typename T> T inproc_inside(T a) { return a * 3; }")
    inside(x)
    torch.cuda.synchronize()
    for _ in range(4):
        p.step()
    t_exit = time.perf_counter()
exit_ms = (time.perf_counter() - t_exit) * 1e3
notes = "\n".join(p.notes)
fig = {}
m = re.search(r"rebinding took ([0-9.]+) ms \(([0-9.]+) ms of CPU\): ([0-9]+) objects, ([0-9.]+) MiB of writable "
              r"segments, ([0-9.]+) MiB of them read \(([^)]*)\)", notes)
if m:
    fig = dict(zip(("rebind_ms", "rebind_cpu_ms", "objects", "writable_mib", "read_mib"), map(float, m.groups()[:5])))
    fig["how"] = m.group(6)
m = re.search(r"putting back took ([0-9.]+) ms", notes)
fig["put_back_ms"] = float(m.group(1)) if m else -1
print(json.dumps({"enter_ms": enter_ms, "exit_ms": exit_ms, "parts": parts, "fig": fig,
                  "compiles": [c["name"] for c in p.data["compiles"] if c["kind"] == "nvrtc"]}))
'''


def check(name, ok, msg):
    global failed
    failed += not ok
    print("CHECK %s %s: %s" % ("PASS" if ok else "FAIL", name, msg), flush=True)


def run(name, script, *args, extra_env=None, script_as=None, quiet=False):
    """`script` run in a fresh interpreter; its last line of output, parsed. `script_as`: the file it
    is written to; `quiet`: its output kept only if it fails (few files come back from the GPU
    machine)."""
    path = os.path.join(out, "inproc_%s.py" % (script_as or name))  # not cupy.py: the script's folder is on sys.path
    with open(path, "w") as f:
        f.write(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUJIT_PROFILE") and k != "CUDA_INJECTION64_PATH"}
    env["CUPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="cupy-cache-", dir=out)  # CuPy compiles, not its cache
    env["USE_PYTORCH_KERNEL_CACHE"] = "0"  # the jiterator compiles each run, not its disk cache's kernel
    env.update(extra_env or {})
    r = subprocess.run([sys.executable, path] + list(args), capture_output=True, text=True, env=env, timeout=500)
    if not quiet or r.returncode != 0:
        with open(os.path.join(out, ("entry" if quiet else name) + ".log"), "a" if quiet else "w") as f:
            f.write(r.stdout + "\n--- stderr\n" + r.stderr)
    if r.returncode != 0:
        check(name + "-run", False, "exit %d: %s" % (r.returncode, r.stderr[-400:]))
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def common_checks(name, got, trace, expect_kernels, kernel_name):
    steps = got["steps"]
    check(name + "-active-step", [s["step"] for s in steps] == [83],
          "active steps %s (torch.profiler.schedule(wait=80, warmup=3, active=1) records step 83)"
          % [s["step"] for s in steps])
    if not steps:
        return
    s = steps[0]
    check(name + "-kernels", s["kernels"] == expect_kernels,
          "step 83: %d kernels recorded, the program's own %d" % (s["kernels"], expect_kernels))
    own = got["own_ms"].get("83")
    ok = own is not None and abs(s["wall_ms"] - own) <= 0.02 * own
    check(name + "-wall", ok, "step 83: %.3f ms recorded, %.3f ms by the program's own clock (%+.2f %%)"
          % (s["wall_ms"], own or 0, 100 * (s["wall_ms"] - own) / own if own else 0))
    spans = [(st["busy_ms"] + st["gap_ms"], st["span_ms"]) for st in s["by_stream"]]
    check(name + "-busy-gaps", all(abs(a - b) <= 1e-6 + 1e-9 * b for a, b in spans),
          "busy + gaps against each stream's span: %s" % spans)
    notes = "\n".join(got["notes"])
    check(name + "-notes", "in-process profile" in notes and "no CUDA driver" not in notes and
          "CUPTI could not" not in notes and "in use by another" not in notes, notes[:400].replace("\n", " | "))
    try:
        with open(trace) as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        named = [e for e in events if kernel_name and kernel_name in str(e.get("name", ""))]
        check(name + "-trace", len(events) > 0 and (not kernel_name or len(named) >= expect_kernels),
              "%s: %d events, %d slices of %s" % (trace, len(events), len(named), kernel_name or "-"))
    except (OSError, ValueError) as e:
        check(name + "-trace", False, "%s: %s" % (trace, e))
    print("RESULT %s step 83: wall %.3f ms, %d kernels, %d launches, GPU busy %.1f %%, verdict %s; entering the "
          "block took %.1f ms" % (name, s["wall_ms"], s["kernels"], s["launches"], s["busy_pct"], s["verdict"],
                                  got.get("enter_ms", -1)), flush=True)


def entry_checks():
    """Item 4 of the module's docstring: block entry and exit in a PyTorch process, the default
    against the former full scan, alternating, each in a fresh process."""
    got = {"default": [], "full": []}
    for r in range(3):
        for how in (("default", "full") if r % 2 == 0 else ("full", "default")):
            g = run("entry-%s" % how, ENTER, extra_env={"GPUJIT_BENCH_REBIND": "v" if how == "default" else "full"},
                    script_as="entry", quiet=True)
            if g:
                got[how].append(g)
    for how, runs in got.items():
        if not runs:
            continue
        g = runs[-1]
        check("entry-%s-jiterator" % how, len(g["compiles"]) == 1 and all(len(x["compiles"]) == 1 for x in runs),
              "NVRTC compiles seen in the block: %s (the jiterator's, through PyTorch's lazy NVRTC table resolved "
              "before the block, rebound by value)" % g["compiles"][:4])
    if not got["default"] or not got["full"]:
        return
    med = lambda how, f: sorted(f(g) for g in got[how])[len(got[how]) // 2]  # noqa: E731
    fig = lambda how, k: med(how, lambda g: g["fig"].get(k, -1))  # noqa: E731
    part = lambda how, k: med(how, lambda g: g["parts"].get(k, 0.0))  # noqa: E731
    check("entry-default-pages-written", got["default"][-1]["fig"].get("how") == "the pages written",
          "the default read %s" % got["default"][-1]["fig"].get("how"))
    for how in ("default", "full"):
        print("RESULT entry-%s (GPUJIT_BENCH_REBIND=%s, median of %d): block entry %.1f ms — the injection "
              "library's start %.1f ms, of it rebinding %.1f ms (%.1f ms of CPU; %d objects, %.1f MiB of writable "
              "segments, %.1f MiB read: %s); ctypes objects %.1f ms (looked up %.1f, rebound %.1f); framework "
              "adapters %.1f ms; block exit %.1f ms (putting back %.1f ms)"
              % (how, "v" if how == "default" else "full", len(got[how]), med(how, lambda g: g["enter_ms"]),
                 part(how, "profile_start"), fig(how, "rebind_ms"), fig(how, "rebind_cpu_ms"), fig(how, "objects"),
                 fig(how, "writable_mib"), fig(how, "read_mib"), got[how][-1]["fig"].get("how", "?"),
                 part(how, "_ctypes_reals") + part(how, "_ctypes_rebind"), part(how, "_ctypes_reals"),
                 part(how, "_ctypes_rebind"), part(how, "_start_adapters"), med(how, lambda g: g["exit_ms"]),
                 fig(how, "put_back_ms")), flush=True)
    print("RESULT entry: block entry %.1f ms (default) against %.1f ms (the former full scan) in a PyTorch process"
          % (med("default", lambda g: g["enter_ms"]), med("full", lambda g: g["enter_ms"])), flush=True)


def main():
    try:
        import torch  # noqa: F401
        has_torch = torch.cuda.is_available()
    except ImportError:
        has_torch = False
    try:
        import cupy  # noqa: F401
        has_cupy = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        has_cupy = False
    if has_torch:
        count = run("mlp_count", MLP, "count")
        trace = os.path.join(out, "mlp.trace.json")
        got = run("mlp", MLP, "profile", trace)
        if count and got:
            check("mlp-schedule-same", count["chosen"] == [83], "torch.profiler.schedule chose %s" % count["chosen"])
            common_checks("mlp", got, trace, count["kernels"], None)
            # the loop compiles nothing else: the one NVRTC compile is the jiterator's, made in step 10
            check("mlp-jiterator-compile", len(got["compiles"]) == 1,
                  "NVRTC compiles seen in the block: %s (PyTorch's lazy NVRTC, through dlsym)" % got["compiles"][:6])
        entry_checks()
    else:
        print("SKIP mlp: PyTorch with CUDA is not installed here", flush=True)
        print("SKIP entry: PyTorch with CUDA is not installed here", flush=True)
    if has_cupy:
        trace = os.path.join(out, "cupy.trace.json")
        got = run("cupy", CUPY, trace)
        if got:
            common_checks("cupy", got, trace, got["per"], "inproc_inside")
            s = got["steps"][0] if got["steps"] else {}
            check("cupy-launches", s.get("launches") == got["per"],
                  "step 83: %s launches recorded, the program's own %d" % (s.get("launches"), got["per"]))
            # RawKernel "inproc_before" compiled before the block (not in it), "inproc_inside" in it: CuPy's
            # NVRTC functions, resolved before the block, rebound by value
            check("cupy-compile-inside", len(got["compiles"]) == 1,
                  "NVRTC compiles seen in the block: %s" % got["compiles"][:6])
    else:
        print("SKIP cupy: CuPy with a GPU is not installed here", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
