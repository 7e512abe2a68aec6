"""What `gpujit profile` costs the program it watches, measured side by side: each workload runs in
rounds, every variant once per round, the order rotated each round (so no variant always runs
first or after the same neighbour); medians with their spread [min-max], and each variant's ratio
to the plain run of the same round (its median and spread).

Workloads (SECTIONS):
  storm   bench/launch_storm.c: LAUNCHES launches of an empty kernel through the driver API, the
          loop timed (target: profiled/plain <= 1.10, <= 0.3 us a launch). Beside the profile: its
          launch callbacks off (GPUJIT_BENCH_LAUNCH_CALLBACKS=0: what CUPTI's kernel records cost
          alone), no CUPTI callbacks at all (subscribe=0: the records alone, launches untied),
          its buffers given back unread (unread=1: CUPTI's own cost), --no-cupti (the wrappers alone).
          Checked: every launch in gj_empty's row.
  mlp     bench/profile_mlp.py: a PyTorch MLP trained STEPS steps, the loop timed (target <= 1.05),
          beside it --no-frameworks and torch.profiler (CUPTI through Kineto). Checked: the launches
          gpujit counted against the kernels torch.profiler counted.
  floor   bench/cupti_floor.c (beside LAUNCH_STORM) as separate processes, alternately: launches with
          CUPTI never called against launches with CUPTI's activity API set up and nothing enabled
          (and with its kernel records, unread): what any CUPTI-based tool costs a launch before it
          does anything. The storm's target lies below it on the H100 (docs/profile.md).
  knobs   the storm under CUPTI settings other than the profile's (GPUJIT_BENCH_LAUNCH_CALLBACKS
          words, src/inject/cupti.c): where a setting makes the per-launch cost smaller.
  cupy    CuPy: 10,000 launches (target <= 1.10 of the run), 50 compiles (<= 1.03).
  jax, triton, frameworks   compile-heavy framework runs (bench/profile_frameworks.py, <= 1.03).
  memory  the storm with ten million launches, once each way: every launch counted, memory bounded.

Usage: python3 profile_overhead.py GPUJIT LAUNCH_STORM [--rounds N] [--launches N] [--steps N]
       [--sections storm,mlp] [--python PY]
       python3 profile_overhead.py GPUJIT LAUNCH_STORM ROUNDS MEMORY_LAUNCHES [SECTIONS]
         (the older form, scripts/gpu.sh's: every section but knobs, the memory check at
         MEMORY_LAUNCHES)
Prints the table, then one line per workload (its name in the first 22 columns: the profile's
ratio, us a launch, the target) for scripts/gpu_summary.py. Writes profile_overhead.json to $OUT
(else its work directory); exits 1 when a target or a check is not met."""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("gpujit")
ap.add_argument("storm")
ap.add_argument("--rounds", type=int, default=7)
ap.add_argument("--launches", type=int, default=1_000_000)
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--sections", default="storm,mlp")
ap.add_argument("--python", default=sys.executable, help="the Python of the workloads (torch, cupy, jax)")
ap.add_argument("legacy", nargs="*", help="ROUNDS MEMORY_LAUNCHES [SECTIONS] (the older form)")
args = ap.parse_args()
memory_launches = 10_000_000
if args.legacy:
    args.rounds = int(args.legacy[0])
    memory_launches = int(args.legacy[1]) if len(args.legacy) > 1 else memory_launches
    args.sections = args.legacy[2] if len(args.legacy) > 2 else "storm,mlp,cupy,frameworks,memory"
g, sections, py = args.gpujit, set(args.sections.split(",")), args.python
here = os.path.dirname(os.path.abspath(__file__))
work = tempfile.mkdtemp(prefix="gpujit-profile-bench-")


class Variant:
    def __init__(self, label, profiled=True, options=(), env=None, extra_args=()):
        self.label, self.profiled, self.options, self.env, self.extra_args = label, profiled, options, env, extra_args


PLAIN = Variant("plain", profiled=False)


def once(cmd, v, tag, keep=None):
    """Run cmd as variant v: (whole-process wall s, its JSON line, the profile's JSON or None)."""
    env = dict(os.environ, CUPY_CACHE_DIR=tempfile.mkdtemp(dir=work), TRITON_CACHE_DIR=tempfile.mkdtemp(dir=work),
               **(v.env or {}))  # real compiles
    js = os.path.join(work, "%s.json" % tag)
    prefix = [g, "profile", "--text", os.devnull, "--json", js] + (["--keep", keep] if keep else []) + list(v.options) + ["--"]
    full = (prefix if v.profiled else []) + cmd + list(v.extra_args)
    t0 = time.perf_counter()
    r = subprocess.run(full, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("profile_overhead: %s failed (%d): %s" % (" ".join(full), r.returncode, r.stderr[-800:]))
    line = json.loads(r.stdout.strip().splitlines()[-1])
    prof = json.load(open(js)) if v.profiled else None
    if prof is not None:
        os.unlink(js)
    return wall, line, prof


def side_by_side(name, cmd, variants, metric):
    """Every variant once a round, the order rotated; per variant its runs as (wall, metric, line, profile)."""
    runs = {v.label: [] for v in variants}
    for i in range(args.rounds):
        for k in range(len(variants)):
            v = variants[(i + k) % len(variants)]
            wall, line, prof = once(cmd, v, "%s-%d-%d" % (name.split()[0], i, k))
            if prof is not None:  # the totals and the rows the checks read, not whole profiles
                prof = {"totals": prof.get("totals", {}), "modules": prof.get("modules", [])}
            runs[v.label].append((wall, line[metric], line, prof))
    return runs


def med(v):
    return statistics.median(v)


def spread(v, scale=1.0, fmt="%.0f"):
    return (fmt + " [" + fmt + "-" + fmt + "]") % (med(v) * scale, min(v) * scale, max(v) * scale)


table, results, failed = [], [], []


def report(name, runs, target=None, per=None, per_label=""):
    """Rows of the table: each variant's loop and run, ratio to the plain run of its round."""
    base = runs["plain"]
    out = {"name": name, "variants": {}}
    for label, rs in runs.items():
        loop = [r[1] for r in rs]
        wall = [r[0] for r in rs]
        ratios = [r[1] / b[1] for r, b in zip(rs, base)]
        row = {"loop_s": loop, "wall_s": wall, "ratio_median": med(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios)}
        extra = ""
        if per:
            row["us_per_launch"] = (med(loop) - med([b[1] for b in base])) / per * 1e6
            extra = "%+.3f" % row["us_per_launch"] if label != "plain" else ""
        verdict = ""
        if target and label == "gpujit profile":
            met = row["ratio_median"] <= target[0] and (not per or row["us_per_launch"] <= target[1])
            verdict = "<= %.2fx%s: %s" % (target[0], " and %.1f us" % target[1] if per else "", "met" if met else "NOT MET")
            row["met"] = met
            if not met:
                failed.append(name)
        table.append((name if label == "plain" else "", label, spread(loop, 1e3), "%.3f [%.3f-%.3f]" % (
            row["ratio_median"], row["ratio_min"], row["ratio_max"]), extra, spread(wall, 1e3), verdict))
        out["variants"][label] = row
    results.append(out)
    return out


def print_table(title):
    heads = ("workload", "variant", "loop ms median [min-max]", "ratio [min-max]", "us/launch", "process ms", "target")
    rows = [heads] + table
    widths = [max(len(r[i]) for r in rows) for i in range(len(heads))]
    if title:
        print(title)
    for r in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def storm_timeline(n):
    """One more profiled storm, its records kept: the GPU's side of the loop, from the first
    launches' kernel records (CUPTI's clock): how long a kernel ran, how far apart they started."""
    keep = os.path.join(work, "storm-records")
    os.makedirs(keep, exist_ok=True)
    _, line, _ = once([args.storm, str(n)], Variant("gpujit profile"), "storm-timeline", keep=keep)
    ks, end = [], {}
    for path in glob.glob(os.path.join(keep, "*.jsonl")):
        for l in open(path):
            if l.startswith('{"k":"kernel"'):
                r = json.loads(l)
                ks.append((r["s"], r["e"]))
            elif l.startswith('{"k":"gpu_end"'):
                end = json.loads(l)
    shutil.rmtree(keep, ignore_errors=True)
    ks.sort()
    if len(ks) < 1000:
        return "the kernel records could not be read"
    ks = ks[len(ks) // 10:]  # past the start
    dur = med([e - s for s, e in ks]) / 1e3
    apart = med([b[0] - a[0] for a, b in zip(ks, ks[1:])]) / 1e3
    host = line["issue_seconds"] / n * 1e6
    return ("GPU side (%d kernel records): a kernel ran %.2f us, kernels started %.2f us apart (the GPU idle %.0f%% "
            "of that); the host issued a launch every %.2f us (loop %.2f us a launch); activity buffers allocated in "
            "the launching thread: %s; kernels not tied to a launch: %s" % (
                len(ks), dur, apart, max(0.0, 100 * (1 - dur / apart)) if apart else 0, host, line["seconds"] / n * 1e6,
                end.get("late_buffers", "?"), end.get("unattributed", "?")))


def mlp_names(mlp):
    """One more run each way, the kernels compared by name: the profile's kernel sums (its records
    kept) against torch.profiler's events."""
    keep = os.path.join(work, "mlp-records")
    os.makedirs(keep, exist_ok=True)
    once(mlp, Variant("gpujit profile"), "mlp-names", keep=keep)
    ours = {}
    for path in glob.glob(os.path.join(keep, "*.jsonl")):
        for l in open(path):
            if l.startswith('{"k":"ksum"'):
                r = json.loads(l)
                ours[r["name"]] = ours.get(r["name"], 0) + r["n"]
    shutil.rmtree(keep, ignore_errors=True)
    if ours and shutil.which("c++filt"):  # CUPTI's names are mangled, torch.profiler's are not
        mangled = list(ours)
        plain = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True).stdout.split("\n")
        if len(plain) >= len(mangled):
            demangled = {}
            for m, d in zip(mangled, plain):
                demangled[d] = demangled.get(d, 0) + ours[m]
            ours = demangled
    _, line, _ = once(mlp, Variant("torch.profiler", profiled=False, extra_args=("--torch-profiler", "--names")), "mlp-names-torch")
    theirs = line.get("by_name", {})
    diff = ["%s: gpujit %d, torch.profiler %d" % (n[:90], ours.get(n, 0), theirs.get(n, 0))
            for n in sorted(set(ours) | set(theirs)) if ours.get(n, 0) != theirs.get(n, 0)]
    return "; ".join(diff[:8]) or "the same names and counts in these two runs"


notes = []
print("gpujit profile overhead: %d rounds, the order of variants rotated each round; medians [min-max]" % args.rounds)
if "storm" in sections:
    n = args.launches
    cmd = [args.storm, str(n)]
    runs = side_by_side("launch_storm %d" % n, cmd, [
        PLAIN, Variant("gpujit profile"),
        Variant("no launch callbacks", env={"GPUJIT_BENCH_LAUNCH_CALLBACKS": "0"}),
        Variant("no CUPTI callbacks", env={"GPUJIT_BENCH_LAUNCH_CALLBACKS": "subscribe=0"}),
        Variant("records unread", env={"GPUJIT_BENCH_LAUNCH_CALLBACKS": "1,unread=1"}),
        Variant("--no-cupti", options=("--no-cupti",))], "seconds")
    report("launch_storm %d" % n, runs, target=(1.10, 0.3), per=n)
    counted = []
    for _, _, line, p in runs["gpujit profile"]:
        t = p["totals"]
        row = next((m for m in p["modules"] if m.get("kernel") == "gj_empty"), {"launches": 0})
        counted.append((t.get("launches"), row["launches"], t.get("untraced"), t.get("lost")))
    bad = [c for c in counted if c[0] != n or c[1] != n]
    notes.append("launch_storm: %s; each run: %d launches in the report, %d in gj_empty's row, %d summed past the "
                 "trace budget, %d lost" % ("every launch counted in every run" if not bad else "LAUNCHES MISSING in %d runs" % len(bad),
                                           counted[0][0], counted[0][1], counted[0][2] or 0, counted[0][3] or 0))
    if bad:
        failed.append("launch_storm counts")
    issue = [r[2]["issue_seconds"] / r[1] for r in runs["plain"]]
    notes.append("launch_storm plain: the loop issued its launches in %.0f%% of its time, the synchronize after them took "
                 "the rest" % (100 * med(issue)))
    notes.append("launch_storm: " + storm_timeline(min(n, 1_000_000)))
if "floor" in sections:
    floor = os.path.join(os.path.dirname(os.path.abspath(args.storm)), "cupti_floor")
    per = {"none": [], "nosub": [], "kernel": []}
    for i in range(args.rounds):
        for how in (("none", "nosub") if i % 2 == 0 else ("nosub", "none")):
            r = subprocess.run([floor, "150000", "3", how], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
            if r.returncode != 0:
                sys.exit("profile_overhead: %s failed: %s" % (floor, r.stderr[-400:]))
            line = json.loads(r.stdout.strip().splitlines()[-1])
            per[how].append(line["plain"][0])
            if how == "nosub":
                per["kernel"].append(line["kernel"][0])
    attach = [a / b for a, b in zip(per["nosub"], per["none"])]
    with_k = [a / b for a, b in zip(per["kernel"], per["none"])]
    notes.append("CUPTI's floor (cupti_floor, %d process pairs, us a launch): CUPTI never called %s; CUPTI's activity API "
                 "set up, nothing enabled %s, %.3fx [%.3f-%.3f] (%+.3f us); with its kernel records, unread %s, %.3fx (%+.3f us)" % (
                     args.rounds, spread(per["none"], 1, "%.2f"), spread(per["nosub"], 1, "%.2f"), med(attach), min(attach),
                     max(attach), med(per["nosub"]) - med(per["none"]), spread(per["kernel"], 1, "%.2f"), med(with_k),
                     med(per["kernel"]) - med(per["none"])))
if "knobs" in sections:
    n = args.launches
    knobs = ["flush=0", "flush=500", "pinned=1", "devbuf=65536", "buffer=16384", "kind=serial"]
    runs = side_by_side("storm, CUPTI settings", [args.storm, str(n)], [PLAIN, Variant("gpujit profile")] + [
        Variant(k, env={"GPUJIT_BENCH_LAUNCH_CALLBACKS": "1," + k}) for k in knobs], "seconds")
    report("storm, CUPTI settings", runs, per=n)
if "mlp" in sections:
    mlp = [py, os.path.join(here, "profile_mlp.py"), str(args.steps)]
    if subprocess.run([py, "-c", "import torch; assert torch.cuda.is_available()"], capture_output=True).returncode == 0:
        runs = side_by_side("mlp %d steps" % args.steps, mlp, [
            PLAIN, Variant("gpujit profile"), Variant("--no-frameworks", options=("--no-frameworks",)),
            Variant("torch.profiler", profiled=False, extra_args=("--torch-profiler",))], "loop_s")
        report("mlp %d steps" % args.steps, runs, target=(1.05, None))
        launches = sorted({p["totals"].get("launches") for _, _, _, p in runs["gpujit profile"]})
        kernels = sorted({line["kernels"] for _, _, line, _ in runs["torch.profiler"]})
        notes.append("mlp: gpujit counted %s launches, torch.profiler %s kernels (the same program): %s" % (
            launches, kernels, "the same" if launches == kernels else "THEY DIFFER"))
        if launches != kernels:
            notes.append("mlp: the kernels counted differently, by name: " + mlp_names(mlp))
    else:
        notes.append("mlp: skipped, %s has no torch with CUDA" % py)
if "cupy" in sections:
    for mode, count, target in (("launches", 10000, 1.10), ("compiles", 50, 1.03)):
        runs = side_by_side("cupy %d %s" % (count, mode), [py, os.path.join(here, "profile_workload.py"), mode, str(count)],
                            [PLAIN, Variant("gpujit profile")], "loop_s")
        report("cupy %d %s" % (count, mode), runs, target=(target, None))
for mod in ("jax", "triton"):
    if "frameworks" in sections or mod in sections:
        if subprocess.run([py, "-c", "import " + mod], capture_output=True).returncode == 0:
            runs = side_by_side("%s 20 compiles" % mod, [py, os.path.join(here, "profile_frameworks.py"), mod, "20"],
                                [PLAIN, Variant("gpujit profile"), Variant("--no-frameworks", options=("--no-frameworks",))], "loop_s")
            report("%s 20 compiles" % mod, runs, target=(1.03, None))
        else:
            notes.append("%s: skipped, not installed" % mod)
if "memory" in sections:
    n = memory_launches
    w0, plain, _ = once([args.storm, str(n)], PLAIN, "memory-plain")
    w1, prof, p = once([args.storm, str(n)], Variant("gpujit profile"), "memory")
    row = next((m for m in p["modules"] if m.get("kernel") == "gj_empty"), {"launches": 0})
    ok = p["totals"]["launches"] == n and row["launches"] == n
    notes.append("launch_storm %d, once each way: loop %.0f -> %.0f ms, peak %d -> %d KiB; %d launches in the report, %d "
                 "in gj_empty's row, %d past the trace budget: %s" % (
                     n, plain["seconds"] * 1e3, prof["seconds"] * 1e3, plain["peak_kib"], prof["peak_kib"],
                     p["totals"]["launches"], row["launches"], p["totals"]["untraced"], "every launch counted" if ok else "LAUNCHES MISSING"))
    if not ok:
        failed.append("memory")
print_table("")
for n_ in notes:
    print("  " + n_)
for r in results:  # one line each, its name in the first 22 columns (scripts/gpu_summary.py)
    v = r["variants"].get("gpujit profile")
    if v:
        print("%-22s %s %.3fx [%.3f-%.3f]%s%s" % (
            r["name"][:22], "profile/plain loop", v["ratio_median"], v["ratio_min"], v["ratio_max"],
            ", %+.3f us a launch" % v["us_per_launch"] if "us_per_launch" in v else "",
            (", target met" if v["met"] else ", target NOT MET") if "met" in v else ""))
out_dir = os.environ.get("OUT") or work
json.dump({"results": results, "notes": notes, "failed": failed}, open(os.path.join(out_dir, "profile_overhead.json"), "w"), indent=1)
print("  (all runs: %s)" % os.path.join(out_dir, "profile_overhead.json"))
sys.exit(1 if failed else 0)
