"""The Genesis/gstaichi guide's own loop under `gpujit profile` (issue 58, scripts/gpu.sh part `steps`):
a gstaichi particle simulation whose every physics step is `ti.sync(); profiler.step()` with
torch.profiler's `schedule(wait=80, warmup=3, active=1)`, as the guide writes it, profiled with
`gpujit profile --step torch --schedule wait=80,warmup=3,active=1`: gpujit counts the same steps,
and steps aside with a note (torch.profiler holds CUPTI, even recording CPU activity alone). Then
the loop with gpujit's step instead (`sync(); gpujit.step()`, here its entry point through ctypes)
under `--step api`, and with no step call at all, each physics step beginning with a launch of
`gj_guide_begin`, under `--step kernel:gj_guide_begin`. Checks: gpujit records the step the
schedule records and no other; that step holds exactly the program's kernels (SUBSTEPS x 2, plus
the begin kernel) and their argument copies as launches; its wall time is within 2 % of the
program's own clock; busy time plus gaps equal each stream's GPU span; the verdict is printed.

Usage: python3 steps_guide.py GPUJIT OUTDIR            (the check; needs gstaichi and torch)
       python3 steps_guide.py --child STEPS SUBSTEPS torch|kernel   (the program)"""
import json
import os
import subprocess
import sys
import tempfile
import time

SCHED = dict(wait=80, warmup=3, active=1, repeat=1)


def child(steps, substeps, mode):
    import gstaichi as ti
    import torch

    ti.init(arch=ti.cuda, offline_cache=False)
    n = 1 << 22
    x = ti.Vector.field(2, ti.f32, shape=n)
    v = ti.Vector.field(2, ti.f32, shape=n)

    @ti.kernel
    def gj_guide_init():
        for i in x:
            x[i] = [ti.random() - 0.5, ti.random() - 0.5]
            v[i] = [0.0, 0.0]

    @ti.kernel
    def gj_guide_begin(dt: ti.f32):
        for i in range(1):
            v[i] += 0.0 * dt

    @ti.kernel
    def gj_guide_forces(dt: ti.f32):
        for i in x:
            v[i] += -dt * x[i] * (1.0 + x[i].norm())

    @ti.kernel
    def gj_guide_move(dt: ti.f32):
        for i in x:
            x[i] += dt * v[i]

    gj_guide_init()
    ti.sync()
    sched = torch.profiler.schedule(**SCHED)
    recorded = [i for i in range(steps) if sched(i).name.startswith("RECORD")]
    calls = []

    def physics():
        for _ in range(substeps):
            gj_guide_forces(1e-3)
            gj_guide_move(1e-3)
        ti.sync()

    if mode == "torch":
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched) as prof:
            for _ in range(steps):
                physics()
                calls.append(time.perf_counter_ns())
                prof.step()
    elif mode == "api":  # gpujit.step()'s entry point (ctypes, as the package calls it) after sync()
        import ctypes
        step = getattr(ctypes.CDLL(None), "gpujit_inject_step")
        for _ in range(steps):
            physics()
            calls.append(time.perf_counter_ns())
            step(0)
    else:  # each physics step begins with a launch of gj_guide_begin: --step kernel:gj_guide_begin
        for _ in range(steps):
            calls.append(time.perf_counter_ns())
            gj_guide_begin(1e-3)
            physics()
        calls.append(time.perf_counter_ns())
    # step k (k >= 1) runs from the k-th boundary (a step() call, a begin launch) to the (k+1)-th
    own_us = [0.0] + [(calls[k] - calls[k - 1]) / 1e3 for k in range(1, len(calls))]
    print(json.dumps({"recorded": recorded, "own_us": own_us, "per_step": 2 * substeps + (mode == "kernel")}))


def main():
    g, out = sys.argv[1], sys.argv[2]
    failed = 0

    def check(name, ok, msg):
        nonlocal failed
        failed += not ok
        print("CHECK %s %s: %s" % ("PASS" if ok else "FAIL", name, msg), flush=True)

    try:
        import gstaichi  # noqa: F401
    except ImportError as e:
        print("CHECK SKIP guide: gstaichi is not importable here (%s): carry its wheels in .deps/wheels" % e)
        return 0
    for mode, step in (("torch", "torch"), ("api", "api"), ("kernel", "kernel:gj_guide_begin")):
        one(g, out, mode, step, check)
    return 1 if failed else 0


def one(g, out, mode, step, check):
    d = tempfile.mkdtemp(prefix="guide-%s-" % mode, dir=out)
    sched = ",".join("%s=%d" % kv for kv in SCHED.items())
    p = subprocess.run([g, "profile", "-q", "--keep", d, "--json=" + d + "/p.json", "--step", step,
                        "--schedule", sched, "--", sys.executable, os.path.abspath(__file__), "--child", "90", "4",
                        mode], capture_output=True, text=True)
    check("guide-run-" + mode, p.returncode == 0, "exit %d %s" % (p.returncode, p.stderr[-600:]))
    if p.returncode != 0:
        return
    own = json.loads(p.stdout.strip().splitlines()[-1])
    rep = json.load(open(d + "/p.json"))
    print("NOTES %s: %s" % (mode, json.dumps(rep.get("notes", []))[:1500]), flush=True)
    steps = rep.get("steps", [])
    got = [x["step"] for x in steps]
    if mode == "torch":  # the program's torch.profiler holds CUPTI (even recording CPU alone): gpujit steps aside
        check("guide-aside-torch", any("CUPTI is in use" in n for n in rep.get("notes", [])),
              "a note says CUPTI was the program's: %s" % [n for n in rep.get("notes", []) if "CUPTI" in n][:1])
        check("guide-same-steps-torch", got == own["recorded"] and got,
              "gpujit counts steps %s, torch.profiler's schedule records %s" % (got, own["recorded"]))
        return
    check("guide-same-steps-" + mode, got == own["recorded"] and got,
          "gpujit explains steps %s, torch.profiler's schedule records %s" % (got, own["recorded"]))
    for x in steps:
        k = x["step"]
        own_ms = own["own_us"][k] / 1e3 if k < len(own["own_us"]) else -1
        # gstaichi copies each launch's arguments to the device: those calls are launches too
        check("guide-kernels-" + mode, x["kernels"] == own["per_step"] and
              x["launches"] == x["kernels"] + x["copies"] + x["memsets"],
              "step %d: %d kernels, %d launches (%d copies, %d memsets); the program launched %d kernels" % (
                  k, x["kernels"], x["launches"], x["copies"], x["memsets"], own["per_step"]))
        check("guide-wall-" + mode, abs(x["wall_ms"] - own_ms) <= 0.02 * own_ms,
              "step %d: wall %.3f ms, the program's own clock %.3f ms" % (k, x["wall_ms"], own_ms))
        print("SUMMARY %s" % x.get("summary", x.get("verdict", "")), flush=True)
    for st in rep.get("step_streams", []):
        check("guide-stream-" + mode, abs(st["busy_ms"] + st["gap_ms"] - st["span_ms"]) <= 0.001,
              "step id %d stream %d: busy %.3f + gaps %.3f = span %.3f ms" % (
                  st["step"], st["stream"], st["busy_ms"], st["gap_ms"], st["span_ms"]))
    for x in rep.get("step_kernels", [])[:4]:
        print("TOP", json.dumps(x), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(main())
