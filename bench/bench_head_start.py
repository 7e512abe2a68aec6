#!/usr/bin/env python3
"""What the head start and the check's helper threads cost and give in a user's case, beside
bench_hit's single hit: every module already cached, whole processes, wall and CPU time (user +
system of the process and all its children), medians of interleaved rounds, three settings side
by side —

  with     the defaults: helpers check a toolkit group, and a build begins the check of the group
           its sources used last time before it works out its key (the head start)
  no-ahead helpers, no head start (GPUJIT_BENCH_CHECK=h)
  without  neither: the lookup's thread checks alone (GPUJIT_CHECK_THREADS=1)

in two cases:

  project  `gpujit build -j JOBS DIR/` of MODULES modules, each including CCCL headers (a group
           of hundreds of records), all cached: the hits are served in the calling process
  python   one Python process building PYMODULES such modules with gpujit.build() (needs --python
           PY whose `import gpujit` works; skipped, with the reason, without it)

usage: bench_head_start.py [--gpujit build/gpujit] [--python PY] [--modules 64] [--pymodules 50]
                           [--jobs N (default: the CPUs)] [--rounds 9]
Prints a table per case and RESULT lines (RESULT case setting wall_ms cpu_ms ratio_to_with).
Standard library only.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HEADERS = ("#include <cuda/std/type_traits>\n#include <cuda/std/limits>\n#include <cuda/std/cstddef>\n")
SETTINGS = [("with", {}), ("no-ahead", {"GPUJIT_BENCH_CHECK": "h"}), ("without", {"GPUJIT_CHECK_THREADS": "1"})]
PY_BUILD = r'''
import os, sys, gpujit
d, cache = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(d)):
    if name.endswith(".cu"):
        gpujit.build(os.path.join(d, name), arch="sm_90", cache=cache)
'''


def write_modules(d, n):
    os.makedirs(d)
    for i in range(n):
        with open(os.path.join(d, "k%03d.cu" % i), "w") as f:
            f.write(HEADERS + 'extern "C" __global__ void k%d(float *x) { x[0] *= %d.0f + '
                    '(float)cuda::std::numeric_limits<int>::digits; }\n' % (i, i + 1))


def timed(cmd, env):
    """(wall ms, CPU ms of the process and its children) of one run; exits on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = (time.monotonic() - t0) * 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("CHECK FAIL %s: rc %d: %s" % (" ".join(cmd), p.returncode, p.stderr.decode()[-600:]))
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    return wall, cpu


def measure(case, cmd, base_env, rounds):
    """Each setting once per round, the order rotated each round; medians."""
    res = {name: [] for name, _ in SETTINGS}
    for _ in range(2):  # warm: every module stored, each group noted for its sources
        for name, extra in SETTINGS:
            timed(cmd, dict(base_env, **extra))
    for r in range(rounds):
        order = SETTINGS[r % len(SETTINGS):] + SETTINGS[:r % len(SETTINGS)]
        for name, extra in order:
            res[name].append(timed(cmd, dict(base_env, **extra)))
    rows = []
    for name, _ in SETTINGS:
        rows.append((name, statistics.median(w for w, _ in res[name]), statistics.median(c for _, c in res[name])))
    base = rows[0][1]
    print("%s: medians of %d interleaved rounds, every module cached" % (case, rounds))
    print("  %-9s %10s %10s %8s" % ("setting", "wall ms", "CPU ms", "wall/with"))
    for name, wall, cpu in rows:
        print("  %-9s %10.1f %10.1f %7.2fx" % (name, wall, cpu, wall / base))
    for name, wall, cpu in rows:
        print("RESULT %s %s wall_ms=%.1f cpu_ms=%.1f ratio=%.3f" % (case, name, wall, cpu, wall / base))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpujit", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                     "gpujit"))
    ap.add_argument("--python")
    ap.add_argument("--modules", type=int, default=64)
    ap.add_argument("--pymodules", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--rounds", type=int, default=9)
    a = ap.parse_args()
    gpujit = os.path.abspath(a.gpujit)
    if not os.access(gpujit, os.X_OK):
        sys.exit("CHECK FAIL no gpujit at %s (build it, or --gpujit PATH)" % gpujit)
    root = tempfile.mkdtemp(prefix="gpujit-bench-head-start-")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUJIT_") or k.endswith("_LIBRARY")}
        env.update(GPUJIT_SERVER="0", GPUJIT_CACHE_DIR=os.path.join(root, "cache"))
        proj = os.path.join(root, "project")
        write_modules(proj, a.modules)
        print("machine: %d CPUs allowed; project build -j %d" % (len(os.sched_getaffinity(0)), a.jobs))
        measure("project%d_j%d" % (a.modules, a.jobs),
                [gpujit, "build", "-q", "-j", str(a.jobs), "--arch", "sm_90", "--out-dir", os.path.join(root, "out"), proj],
                env, a.rounds)
        if not a.python:
            print("SKIP python: no --python interpreter given (one whose `import gpujit` works)")
        elif subprocess.run([a.python, "-c", "import gpujit"], capture_output=True).returncode != 0:
            print("SKIP python: %s cannot import gpujit" % a.python)
        else:
            py = os.path.join(root, "py")
            write_modules(py, a.pymodules)
            script = os.path.join(root, "build50.py")
            with open(script, "w") as f:
                f.write(PY_BUILD)
            measure("python%d" % a.pymodules, [a.python, script, py, os.path.join(root, "pycache")], env, a.rounds)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
