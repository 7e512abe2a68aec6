#!/usr/bin/env python3
"""Compare two builds of gpujit (say main before and after a change) side by side in one run.

Runs bench_cache, bench_compile and (where a GPU is present) bench_run of both build trees in
alternating order, round after round, so drift on the machine hits both alike; prints each
figure's median over the rounds for each build, their ratio (new / old), and each build's own
round-to-round spread, so a difference inside the spread reads as noise.

usage: bench/compare_builds.py OLD_BUILD_DIR NEW_BUILD_DIR [--rounds N] [--quick]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.stdout


def cache_figures(build, reps, preps):
    out = run([os.path.join(build, "bench", "bench_cache"), str(reps), str(preps)])
    want = {  # labels of older and newer bench_cache alike
        "in-process hit (API -> module)": "cache hit, in process (ms)",
        "in-process hit, saxpy (API -> module)": "cache hit, in process (ms)",
        "in-process hit, block_reduce": "cache hit block_reduce, in process (ms)",
        "in-process cold compile": "cold compile, in process (ms)",
        "process: gpujit build (hit)": "gpujit build, hit, whole process (ms)",
        "process: gpujit build --arch sm_90 (hit)": "gpujit build, hit, whole process (ms)",
        "process: gpujit build (miss, fresh cache)": "gpujit build, miss, whole process (ms)",
        "process: gpujit build --no-cache": "gpujit build --no-cache, whole process (ms)",
    }
    figs = {}
    for line in out.splitlines():
        keys = [k for k in want if line.startswith(k)]
        if keys:
            key = max(keys, key=len)
            m = re.search(r"\s(\d+\.\d+)(\s|$)", line[len(key):])
            if m:
                figs[want[key]] = float(m.group(1))
    return figs


def compile_figures(build, reps):
    out = run([os.path.join(build, "bench", "bench_compile"), str(reps)])
    med = {}
    for line in out.splitlines():
        m = re.match(r"(\S+)\s+(nvrtc|gpujit|nvrtc\+trace|gpujit\+trace)\s+([\d.]+)\s+([\d.]+)$", line)
        if m:
            med[(m.group(1), m.group(2))] = float(m.group(4))
    figs = {}
    for (module, variant), ms in med.items():
        if variant == "gpujit":
            figs[f"{module} compile, gpujit (ms)"] = ms
            figs[f"{module} gpujit / nvrtc"] = ms / med[(module, "nvrtc")]
        if variant == "gpujit+trace":
            figs[f"{module} gpujit+trace / nvrtc+trace"] = ms / med[(module, "nvrtc+trace")]
    return figs


def default_arch_hits(build, reps, workdir):
    """Whole `gpujit build` processes without --arch, all hits: the cost of finding the default arch."""
    cli = os.path.join(build, "gpujit")
    cache = os.path.join(workdir, "cache-" + os.path.basename(os.path.abspath(build)))
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "saxpy.cu")
    cmd = [cli, "-q", "build", "--cache-dir", cache, "-o", os.path.join(workdir, "x.cubin"), src]
    run(cmd)
    run(cmd)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run(cmd)
        times.append((time.perf_counter() - t0) * 1e3)
    return {"gpujit build, hit, default arch, whole process (ms)": statistics.median(times)}


def run_figures(build, rounds):
    out = run([os.path.join(build, "bench", "bench_run"), str(rounds)])
    if "skipped" in out:
        return {}
    figs = {}
    for line in out.splitlines():
        m = re.match(r"\s+(.+?)\s+([-\d.]+) µs", line)
        if m:
            figs[f"launch: {m.group(1).strip()} (µs)"] = float(m.group(2))
    return figs


def spread(values):
    """Robust relative spread: the median absolute deviation over the median, in %."""
    if len(values) < 2:
        return float("nan")
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values)
    return 100 * 1.4826 * mad / abs(med) if med else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="fewer repeats inside each benchmark")
    a = p.parse_args()
    reps, preps, creps, lrounds = (100, 10, 1, 10) if a.quick else (300, 30, 2, 40)
    samples = {"old": {}, "new": {}}
    workdir = tempfile.mkdtemp(prefix="gpujit-compare-")
    for r in range(a.rounds):
        order = [("old", a.old), ("new", a.new)]
        if r % 2:
            order.reverse()
        for side, build in order:
            figs = {}
            figs.update(cache_figures(build, reps, preps))
            figs.update(compile_figures(build, creps))
            figs.update(run_figures(build, lrounds))
            figs.update(default_arch_hits(build, 9 if a.quick else 15, workdir))
            for k, v in figs.items():
                samples[side].setdefault(k, []).append(v)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    print(f"old: {a.old}\nnew: {a.new}\n{a.rounds} alternating rounds; medians over rounds; "
          "spread = MAD/median of one build's rounds\n")
    print(f"{'figure':48} {'old':>10} {'new':>10} {'new/old':>8} {'spread old':>11} {'spread new':>11}")
    for k in list(samples["old"]) + [k for k in samples["new"] if k not in samples["old"]]:
        o, n = samples["old"].get(k), samples["new"].get(k)
        mo = statistics.median(o) if o else None
        mn = statistics.median(n) if n else None
        cell = lambda v: f"{v:10.4f}" if v is not None else f"{'-':>10}"
        ratio = f"{mn / mo:8.3f}" if mo and mn is not None else f"{'-':>8}"
        so = f"{spread(o):10.1f}%" if o else f"{'-':>11}"
        sn = f"{spread(n):10.1f}%" if n else f"{'-':>11}"
        print(f"{k:48} {cell(mo)} {cell(mn)} {ratio} {so} {sn}")


if __name__ == "__main__":
    main()
