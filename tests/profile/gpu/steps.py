"""GPU checks of steps and the schedule (issue 58), run by scripts/gpu.sh (part `steps`):

1. bench/step_storm under `gpujit profile --schedule wait=W,warmup=U,active=A`: exactly the
   schedule's steps have records; each active step holds exactly the program's launches for it
   (kernel records whose launch record lies in the step), its wall time is within 2 % of the
   program's own measure, and busy time plus gaps equal each stream's GPU span.
2. The cost, side by side: ROUNDS alternated pairs of the plain run and the scheduled profile
   (1,000 launches a step, wait=900, active=10): median ratio and spread; at most 1.02x.
3. A PyTorch MLP loop whose steps are its torch.profiler's step(): under `gpujit profile` the steps
   gpujit records are the ones torch.profiler's schedule chooses; and the MLP's cost with a
   schedule, its steps marked by gpujit.step()'s entry point (--step api) or by NVTX marks
   (--step nvtx:step: gpujit's own NVTX injection counts them, no CUPTI before the first warmup
   step; checked: the same steps as torch.profiler's schedule, the step marks of the recorded steps
   written, no kernel recorded before the first warmup step), against the plain run, in turning order.
The cost runs are pinned to one CPU (taskset; GPUJIT_STEP_CPU, 3 unless set).
Usage: python3 steps.py GPUJIT STEP_STORM OUTDIR [ROUNDS]. Prints CHECK and RESULT lines."""
import glob
import shutil
import json
import os
import statistics
import subprocess
import sys
import tempfile

g, storm, out = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 7
here = os.path.dirname(os.path.abspath(__file__))
failed = 0


def check(name, ok, msg):
    global failed
    failed += not ok
    print("CHECK %s %s: %s" % ("PASS" if ok else "FAIL", name, msg), flush=True)


def records(d):
    rows = []
    for f in sorted(glob.glob(os.path.join(d, "p*.jsonl"))):
        for line in open(f):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows


def to_host(rows):
    """GPU times on the host clock, from each process's clock record."""
    clock = {}
    for r in rows:
        if r["k"] == "clock":
            clock[r["pid"]] = r["host"] - r["cupti"]
    return clock


def storm_check(steps, per, sched, expect_active):
    d = tempfile.mkdtemp(prefix="steps-", dir=out)
    p = subprocess.run([g, "profile", "-q", "--keep", d, "--json=" + d + "/p.json", "--schedule", sched, "--",
                        storm, str(steps), str(per)], capture_output=True, text=True)
    check("storm-run", p.returncode == 0, "exit %d %s" % (p.returncode, p.stderr[-300:]))
    own = json.loads(p.stdout.strip().splitlines()[-1])
    rows = records(d)
    st = [r for r in rows if r["k"] == "step"]
    got = [(r["n"], r["phase"]) for r in st]
    check("storm-steps", [n for n, ph in got if ph == "active"] == expect_active,
          "active steps %s, the schedule's %s" % ([n for n, ph in got if ph == "active"], expect_active))
    off = to_host(rows)
    launches = [r for r in rows if r["k"] == "launch"]
    kernels = {r["corr"]: r for r in rows if r["k"] == "kernel"}
    bounds = sorted(r["t"] for r in st)
    for i, r in enumerate(st):
        if r["phase"] != "active":
            continue
        t0, t1 = r["t"], next((b for b in bounds if b > r["t"]), None)
        if t1 is None:
            check("storm-step-end", False, "step %d has no end" % r["n"])
            continue
        mine = [l for l in launches if t0 <= l["t0"] < t1]
        ks = [kernels[l["corr"]] for l in mine if l["corr"] in kernels]
        check("storm-launches", len(mine) == per and len(ks) == per,
              "step %d: %d launch records, %d kernels, the program made %d" % (r["n"], len(mine), len(ks), per))
        wall_us, own_us = (t1 - t0) / 1e3, own["step_us"][r["n"]] if r["n"] < len(own["step_us"]) else -1
        check("storm-wall", abs(wall_us - own_us) <= 0.02 * own_us,
              "step %d: %.1f us recorded, %.1f us by the program's own clock" % (r["n"], wall_us, own_us))
        if ks:
            o = off.get(ks[0]["pid"], 0)
            spans = sorted((k["s"] + o, k["e"] + o) for k in ks)
            busy = sum(e - s for s, e in spans)
            gaps = sum(max(0, spans[j + 1][0] - spans[j][1]) for j in range(len(spans) - 1))
            span = spans[-1][1] - spans[0][0]
            check("storm-busy-gaps", abs(busy + gaps - span) <= 1000,
                  "step %d: busy %.1f us + gaps %.1f us = %.1f us, span %.1f us" % (
                      r["n"], busy / 1e3, gaps / 1e3, (busy + gaps) / 1e3, span / 1e3))
    # the report's own account of the same steps (--json)
    rep = json.load(open(d + "/p.json"))
    active = [x for x in rep.get("steps", [])]
    check("report-steps", [x["step"] for x in active] == expect_active,
          "the report explains steps %s" % [x["step"] for x in active])
    for x in active:
        own_ms = own["step_us"][x["step"]] / 1e3 if x["step"] < len(own["step_us"]) else -1
        check("report-step", x["kernels"] == per and x["launches"] == per and abs(x["wall_ms"] - own_ms) <= 0.02 * own_ms,
              "step %d: %d kernels, %d launches, wall %.3f ms (the program's %.3f), busy %.1f %%, median gap %.1f us: %s" % (
                  x["step"], x["kernels"], x["launches"], x["wall_ms"], own_ms, x["busy_pct"], x["gap_median_us"],
                  x["verdict"]))
    for st in rep.get("step_streams", []):
        check("report-stream", abs(st["busy_ms"] + st["gap_ms"] - st["span_ms"]) <= 0.001,
              "step id %d stream %d: busy %.3f + gaps %.3f = span %.3f ms" % (
                  st["step"], st["stream"], st["busy_ms"], st["gap_ms"], st["span_ms"]))
    print("SUMMARY", next((x["summary"] for x in active), ""), flush=True)
    return d


def timed(cmd, steps=None, env=None):
    """The program's own loop seconds; with `steps` (a list), its step times are appended to it."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print(p.stderr[-500:])
        return None
    own = json.loads(p.stdout.strip().splitlines()[-1])
    if steps is not None and "step_us" in own:
        steps.append(own["step_us"])
    return own["seconds"]


only = os.environ.get("GPUJIT_STEP_ONLY", "")
# the cost runs on one CPU, the same for both arms (launch throughput follows the core it runs on:
# unpinned, plain runs alone spread +-10 %)
pin = ["taskset", "-c", os.environ.get("GPUJIT_STEP_CPU", "3")] if shutil.which("taskset") else []
# 1. correctness: 30 steps of 1000 launches, wait=5, warmup=2, active=3, repeat=2
if only in ("", "storm"):
    storm_check(30, 1000, "wait=5,warmup=2,active=3,repeat=2", [7, 8, 9, 17, 18, 19])
# 2. cost: 1000 launches a step, wait=900, active=10 (warmup 1), 1000 steps; plain, profiled with the
# schedule, and (to say where a cost lies) profiled without CUPTI at all, in turning order
plain, prof, nocupti, late = [], [], [], []
step_times = [[], [], [], []]  # each run's own step times, per arm: where a cost lies (wait steps, attach, detach)
order = [0, 1, 2, 3]
for i in range(rounds if only in ("", "storm") else 0):
    for which in order[i % 4:] + order[:i % 4]:
        cmd, env = [storm, "1000", "1000"], None
        if which in (1, 3):
            cmd = [g, "profile", "-q", "--schedule", "wait=900,warmup=1,active=10,repeat=1", "--"] + cmd
        elif which == 2:
            cmd = [g, "profile", "-q", "--no-cupti", "--"] + cmd
        if which == 3:  # the same schedule, CUPTI loaded at the warmup step (not ahead on a thread at cuInit)
            env = dict(os.environ, GPUJIT_BENCH_LAUNCH_CALLBACKS="ahead=0")
        cmd = pin + cmd
        s = timed(cmd, step_times[which], env)
        [plain, prof, nocupti, late][which].append(s if s is not None else float("nan"))
print("RUNS plain %s" % " ".join("%.3f" % x for x in plain))
print("RUNS scheduled %s" % " ".join("%.3f" % x for x in prof))
print("RUNS no_cupti %s" % " ".join("%.3f" % x for x in nocupti))
r2 = [b / a for a, b in zip(plain, nocupti)] or [float("nan")]
plain, prof, nocupti = plain or [float("nan")], prof or [float("nan")], nocupti or [float("nan")]
print("RESULT storm_no_cupti plain_s %.4f profiled_s %.4f ratio %.4f spread %.4f-%.4f" % (
    statistics.median(plain), statistics.median(nocupti), statistics.median(r2), min(r2), max(r2)), flush=True)


def step_median(runs, pick):
    v = [pick(st) for st in runs if len(st) == 1000]
    return statistics.median(v) if v else float("nan")


# where the time goes, by the program's own step times (medians over the runs): a wait step (1-898,
# nothing recorded yet), the step whose end attaches CUPTI (899, the first warmup step begins), the
# step whose end detaches it (911, after the last active one), an active step (901-910)
wait_of = lambda st: statistics.median(st[1:899])
print("RESULT storm_steps wait_step_us plain %.1f scheduled %.1f no_cupti %.1f not_ahead %.1f; scheduled attach_step_us %.1f "
      "active_step_us %.1f detach_step_us %.1f; not_ahead attach_step_us %.1f" % (
          step_median(step_times[0], wait_of), step_median(step_times[1], wait_of), step_median(step_times[2], wait_of),
          step_median(step_times[3], wait_of),
          step_median(step_times[1], lambda st: st[899]), step_median(step_times[1], lambda st: statistics.median(st[901:911])),
          step_median(step_times[1], lambda st: st[911]), step_median(step_times[3], lambda st: st[899])), flush=True)
r3 = [b / a for a, b in zip(plain, late)] or [float("nan")]
print("RESULT storm_schedule_not_ahead ratio %.4f spread %.4f-%.4f" % (statistics.median(r3), min(r3), max(r3)), flush=True)
ratios = [b / a for a, b in zip(plain, prof)] or [float("nan")]
print("RESULT storm_schedule plain_s %.4f profiled_s %.4f ratio %.4f spread %.4f-%.4f" % (
    statistics.median(plain), statistics.median(prof), statistics.median(ratios), min(ratios), max(ratios)), flush=True)
if only in ("", "storm"):
    check("storm-cost", statistics.median(ratios) <= 1.02, "median %.4fx over %d pairs (target <= 1.02x)" % (
        statistics.median(ratios), rounds))

if only == "storm":  # GPUJIT_STEP_ONLY=storm: the launch storm alone
    sys.exit(1 if failed else 0)

# 3. PyTorch: steps from torch.profiler's step(), and NVTX marks as steps
mlp = os.path.join(here, "steps_mlp.py")
d = tempfile.mkdtemp(prefix="torch-steps-", dir=out)
p = subprocess.run([g, "profile", "-q", "--keep", d, "--schedule", "wait=5,warmup=2,active=2,repeat=1", "--step", "torch",
                    "--", sys.executable, mlp, "40", "--torch-profiler", "wait=5,warmup=2,active=2,repeat=1"],
                   capture_output=True, text=True)
check("torch-run", p.returncode == 0, "exit %d %s" % (p.returncode, p.stderr[-400:]))
rows = records(d)
ours = sorted(r["n"] for r in rows if r["k"] == "step" and r["phase"] == "active")
theirs = json.loads(p.stdout.strip().splitlines()[-1]).get("recorded", []) if p.stdout.strip() else []
check("torch-same-steps", ours == theirs and ours, "gpujit's active steps %s, torch.profiler's %s" % (ours, theirs))
# NVTX marks as steps, through gpujit's own NVTX injection (torch's NVTX calls come to the injection
# library; no CUPTI before the first warmup step): the same steps as torch.profiler's schedule chose,
# each step mark of the recorded steps (warmup 5, 6, active 7, 8, the one after, 9) written on the
# host clock, and no kernel recorded before the first warmup step began
d = tempfile.mkdtemp(prefix="nvtx-steps-", dir=out)
p = subprocess.run([g, "profile", "-q", "--keep", d, "--schedule", "wait=5,warmup=2,active=2,repeat=1", "--step",
                    "nvtx:step", "--", sys.executable, mlp, "40", "--nvtx"], capture_output=True, text=True)
check("nvtx-run", p.returncode == 0, "exit %d %s" % (p.returncode, p.stderr[-400:]))
rows = records(d)
st = [r for r in rows if r["k"] == "step"]
ours = sorted(r["n"] for r in st if r["phase"] == "active")
marks = [r for r in rows if r["k"] == "nvtx" and r["name"] == "step"]
off = to_host(rows)
ks = [r["s"] + off.get(r["pid"], 0) for r in rows if r["k"] == "kernel"]
first = min([r["t"] for r in st] or [0])
check("nvtx-same-steps", ours == theirs and ours and {r["src"] for r in st} == {"nvtx"},
      "gpujit's active steps %s (from %s), torch.profiler's %s" % (ours, sorted({r["src"] for r in st}), theirs))
check("nvtx-ranges", len(marks) == 5 and all("t0" in r for r in marks),
      "%d step marks recorded (expected 5: warmup, active, the step after), clocks %s" % (
          len(marks), sorted({"host" if "t0" in r else "cupti" for r in marks})))
check("nvtx-no-early-kernels", ks and min(ks) >= first, "%d kernels recorded, the first %.3f ms after the first "
      "warmup step began" % (len(ks), (min(ks) - first) / 1e6 if ks else float("nan")))
print("RESULT mlp_nvtx_steps active %s marks %d kernels %d notes %s" % (
    ours, len(marks), len(ks), [r["msg"][:80] for r in rows if r["k"] == "note" and r.get("what") != "schedule"]),
    flush=True)
# the MLP's cost with a schedule: plain, its steps marked through gpujit.step()'s entry point, and
# marked by NVTX (gpujit's own NVTX injection counts them), in turning order
S = "wait=900,warmup=1,active=10,repeat=1"
arms = {"plain": [], "api": [], "nvtx": [], "torch": []}
order = ["plain", "api", "nvtx", "torch"]
for i in range(rounds):
    for which in order[i % 4:] + order[:i % 4]:
        cmd = pin + [sys.executable, mlp, "1000", "--" + ("nvtx" if which == "plain" else which)]
        if which == "torch":  # torch.profiler itself with the same schedule, beside
            cmd = pin + [sys.executable, mlp, "1000", "--torch-profiler", S]
        elif which != "plain":
            cmd = pin + [g, "profile", "-q", "--step", "api" if which == "api" else "nvtx:step", "--schedule", S,
                         "--"] + cmd[len(pin):]
        s = timed(cmd)
        arms[which].append(s if s is not None else float("nan"))
for which in ("api", "nvtx", "torch"):
    ratios = [b / a for a, b in zip(arms["plain"], arms[which])] or [float("nan")]
    print("RESULT mlp_schedule_%s plain_s %.4f profiled_s %.4f ratio %.4f spread %.4f-%.4f" % (
        which, statistics.median(arms["plain"] or [float("nan")]), statistics.median(arms[which] or [float("nan")]),
        statistics.median(ratios), min(ratios), max(ratios)), flush=True)
    if which != "torch":  # torch.profiler's own cost is shown beside, not held to gpujit's target
        check("mlp-cost-" + which, statistics.median(ratios) <= 1.02, "median %.4fx over %d pairs (target <= 1.02x)" % (
            statistics.median(ratios), rounds))
sys.exit(1 if failed else 0)
