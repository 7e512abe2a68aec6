"""What `gpujit profile` costs the program it watches, measured side by side in one run: each
workload runs alternately with and without the profile, and the medians are compared.
  - a CuPy loop of 10,000 small kernel launches (target: <= 10 % of the run's wall time),
  - a JIT-heavy CuPy run compiling 50 distinct kernels (target: <= 3 % of the run's wall time),
The target is judged on the whole run (the process, start to end, as its user waits for it); the
timed loop alone is printed beside it: a loop of nothing but launches of an empty kernel is where
CUPTI's per-launch cost (its kernel records and the launch callbacks that tie launches to
modules) shows most, and the breakdown line says how much of it is whose.
  - ten million launches through the driver API (bench/launch_storm.c): the report must count
    every launch while the profiled process's memory stays bounded.
  - compile-heavy framework runs (bench/profile_frameworks.py): 20 JAX functions through XLA, 20
    Triton specializations, with the Python start-up hook and its adapters recording each
    compile (target: <= 3 % of the run's wall time).
The injection library's peak memory is the profiled process's peak resident memory minus the
plain run's. Usage: python3 profile_overhead.py GPUJIT LAUNCH_STORM [PAIRS] [STORM_LAUNCHES] [SECTIONS]
(SECTIONS: comma-separated of cupy, storm, frameworks (or jax, triton alone), breakdown (frameworks' variants); default
cupy,storm,frameworks)"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

g, storm = sys.argv[1], sys.argv[2]
pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
storm_n = int(sys.argv[4]) if len(sys.argv) > 4 else 10_000_000
sections = set((sys.argv[5] if len(sys.argv) > 5 else "cupy,storm,frameworks").split(","))
here = os.path.dirname(os.path.abspath(__file__))
work = tempfile.mkdtemp(prefix="gpujit-profile-bench-")


def once(cmd, profiled, tag, options=(), extra_env=None):
    """Run cmd (plain or under the profile) and return (whole-process wall s, its JSON line, profile)."""
    env = dict(os.environ, CUPY_CACHE_DIR=tempfile.mkdtemp(dir=work), TRITON_CACHE_DIR=tempfile.mkdtemp(dir=work),
               **(extra_env or {}))  # real compiles
    js = os.path.join(work, "%s.json" % tag)
    full = ([g, "profile", "-o", os.devnull, "--json", js] + list(options) + ["--"] if profiled else []) + cmd
    t0 = time.perf_counter()
    r = subprocess.run(full, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("profile_overhead: %s failed (%d): %s" % (" ".join(full), r.returncode, r.stderr[-800:]))
    line = json.loads(r.stdout.strip().splitlines()[-1])
    prof = json.load(open(js)) if profiled else None
    return wall, line, prof


def side_by_side(name, cmd, target):
    plain, prof = [], []
    last = None
    for i in range(pairs):
        for profiled in ((False, True) if i % 2 == 0 else (True, False)):  # alternate which goes first
            wall, line, p = once(cmd, profiled, "%s-%d" % (name, i))
            (prof if profiled else plain).append((wall, line["loop_s"], line["peak_kib"]))
            last = p or last
    med = lambda v, k: statistics.median(x[k] for x in v)
    r_wall, r_loop = med(prof, 0) / med(plain, 0), med(prof, 1) / med(plain, 1)
    mem = med(prof, 2) - med(plain, 2)
    print("%-22s run %7.0f -> %7.0f ms (%.3fx, target <= %.2fx: %s)  its loop alone %6.1f -> %6.1f ms (%.3fx)  peak +%d KiB"
          % (name, med(plain, 0) * 1e3, med(prof, 0) * 1e3, r_wall, target, "met" if r_wall <= target else "NOT MET",
             med(plain, 1) * 1e3, med(prof, 1) * 1e3, r_loop, mem))
    return {"name": name, "loop_ratio": r_loop, "process_ratio": r_wall, "peak_extra_kib": mem,
            "target": target, "met": r_wall <= target, "report": last and last["totals"]}


def breakdown(name, cmd, variants):
    """Where a run's overhead goes: each variant (name, profiled, options, env) rotated in order;
    medians of the whole run and of its loop, against the plain run."""
    runs = {v[0]: [] for v in variants}
    for i in range(pairs):
        for k in range(len(variants)):
            vname, profiled, opts, extra = variants[(i + k) % len(variants)]  # rotate the order
            wall, line, _ = once(cmd, profiled, "variant-%d-%d" % (i, k), opts, extra)
            runs[vname].append((wall, line["loop_s"]))
    base = [statistics.median(x[j] for x in runs["plain"]) for j in (0, 1)]
    print("%s, where it goes: " % name + ", ".join(
        "%s run %.0f ms (%.3fx) loop %.0f ms (%.3fx)" % (
            v[0], statistics.median(x[0] for x in runs[v[0]]) * 1e3, statistics.median(x[0] for x in runs[v[0]]) / base[0],
            statistics.median(x[1] for x in runs[v[0]]) * 1e3, statistics.median(x[1] for x in runs[v[0]]) / base[1])
        for v in variants))


results = []
print("gpujit profile overhead: %d pairs, medians (plain -> profiled)" % pairs)
if "frameworks" in sections or sections & {"jax", "triton"}:
    fw = os.path.join(here, "profile_frameworks.py")
    for mod, name in (("jax", "jax 20 compiles"), ("triton", "triton 20 compiles")):
        if "frameworks" not in sections and mod not in sections:
            continue
        if subprocess.run([sys.executable, "-c", "import " + mod], capture_output=True).returncode == 0:
            results.append(side_by_side(name, [sys.executable, fw, mod, "20"], 1.03))
            t = results[-1]["report"] or {}
            print("%-22s the report: %s compiles, %.0f ms of JIT compile" % ("", t.get("compiles"), t.get("compile_ms", 0)))
            if "breakdown" in sections:
                breakdown(name, [sys.executable, fw, mod, "20"],
                          [("plain", False, (), None), ("profile", True, (), None),
                           ("--no-frameworks", True, ("--no-frameworks",), None), ("--no-cupti", True, ("--no-cupti",), None),
                           ("no launch callbacks", True, (), {"GPUJIT_PROFILE_LAUNCH_CALLBACKS": "0"})])
        else:
            print("%s: skipped, %s is not installed" % (name, mod))
if "cupy" in sections:
    results.append(side_by_side("cupy 10000 launches", [sys.executable, os.path.join(here, "profile_workload.py"), "launches", "10000"], 1.10))
    # Where a launch loop's overhead goes: the profile as it is, without its launch callbacks (which
    # tie each launch to its module), and with CUPTI left alone (--no-cupti: the wrappers only).
    launch_cmd = [sys.executable, os.path.join(here, "profile_workload.py"), "launches", "10000"]
    variants = [("plain", False, (), None), ("profile", True, (), None),
                ("no launch callbacks", True, (), {"GPUJIT_PROFILE_LAUNCH_CALLBACKS": "0"}),
                ("--no-cupti", True, ("--no-cupti",), None)]
    loops = {v[0]: [] for v in variants}
    for i in range(pairs):
        for k in range(len(variants)):
            name, profiled, opts, extra = variants[(i + k) % len(variants)]  # rotate the order
            loops[name].append(once(launch_cmd, profiled, "variant-%d-%d" % (i, k), opts, extra)[1]["loop_s"])
    base = statistics.median(loops["plain"])
    print("cupy 10000 launches, where it goes: " + ", ".join(
        "%s %.1f ms (%.3fx)" % (v[0], statistics.median(loops[v[0]]) * 1e3, statistics.median(loops[v[0]]) / base) for v in variants))
    results.append(side_by_side("cupy 50 compiles", [sys.executable, os.path.join(here, "profile_workload.py"), "compiles", "50"], 1.03))
if "storm" in sections:
    # ten million launches: once each way (each is tens of seconds)
    w0, plain, _ = once([storm, str(storm_n)], False, "storm-plain")
    w1, prof, p = once([storm, str(storm_n)], True, "storm")
    t = p["totals"]
    row = next((m for m in p["modules"] if m["kernel"] == "gj_empty"), {"launches": 0})
    counted = t["launches"] == storm_n and row["launches"] == storm_n  # counted, and tied to gj_empty's module
    print("launch_storm %d       loop %8.0f -> %8.0f ms (%.3fx)  peak %d -> %d KiB (+%d KiB)  report: %d launches, %d left out of "
          "the trace, %d lost, %d in gj_empty's module: %s" % (storm_n, plain["seconds"] * 1e3, prof["seconds"] * 1e3, prof["seconds"] / plain["seconds"],
                                      plain["peak_kib"], prof["peak_kib"], prof["peak_kib"] - plain["peak_kib"], t["launches"],
                                      t["untraced"], t["lost"], row["launches"], "every launch counted" if counted else "LAUNCHES MISSING"))
    results.append({"name": "launch_storm", "launches": t["launches"], "expected": storm_n, "untraced": t["untraced"],
                    "lost": t["lost"], "peak_plain_kib": plain["peak_kib"], "peak_profiled_kib": prof["peak_kib"],
                    "loop_ratio": prof["seconds"] / plain["seconds"], "met": counted})
json.dump(results, open(os.path.join(os.environ.get("OUT", work), "profile_overhead.json"), "w"), indent=1)
sys.exit(0 if all(r["met"] for r in results) else 1)
