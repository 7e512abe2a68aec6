#!/usr/bin/env python3
"""Where one machine stops building a project of many modules, and what spreading the compiles over
machines (a remote-execution engine speaking the Bazel Remote Execution API) gives (issue 62 item 4).

A model, fed with what was measured (defaults: the H200 host of scripts/gpu.sh bench, issue 62):
  - a header-heavy module compiles in 2253 ms, a small one in 29 ms (one process, one core);
  - NVRTC compiles one program at a time per process, so a machine's parallelism is processes, and
    they slow each other (memory bandwidth, caches): 64 compiles went 10.32x faster on 16 processes
    than on 1, a slowdown of 1 + a * (P - 1) per compile with a = 0.035;
  - each NVRTC process holding CUB's headers takes ~0.6 GiB (PCH heap 256 MiB + the front end);
  - the coordinating process serves or dispatches each module in ~0.3 ms, one after another;
  - a cache entry is ~60 KiB (cubin + manifest), written atomically without fsync;
  - remote execution adds per action ~25 ms (upload of the action and its missing inputs, queue,
    download of the output; inputs deduplicated by digest, the toolkit's headers cached on the
    executor), and the executors have the same cores.

Then where precompiled headers pay at -j cores: a PCH build cannot end before one making plus one
use (the chain), so against a build without PCH it gains only once there are several header-heavy
modules a core (pch_bound).

usage: scale_sim.py [--modules N] [--heavy-share F] [--cores C] [--mem-gib G] [--machines M ...]
Prints a table and RESULT lines; `--check` asserts the model's known points (used as a test).
"""
import argparse
import math
import sys


def one_machine(modules, heavy_share, cores, mem_gib, a=0.035, heavy_ms=2253.0, small_ms=29.0, proc_gib=0.6,
                dispatch_ms=0.3, entry_kib=60.0, disk_mib_s=500.0):
    """The wall time (ms) of a cold build on one machine, and what bounds it."""
    heavy = round(modules * heavy_share)
    work = heavy * heavy_ms + (modules - heavy) * small_ms
    procs = min(cores, max(1, int(mem_gib / proc_gib)), modules)
    compile_wall = work / procs * (1 + a * (procs - 1))
    bounds = {
        "cores": compile_wall if procs == cores or procs == modules else 0,
        "memory": compile_wall if procs < cores and procs < modules else 0,
        "coordinator": modules * dispatch_ms,
        "disk": modules * entry_kib / 1024 / disk_mib_s * 1e3,
        "longest module": heavy_ms if heavy else small_ms,
    }
    what = max(bounds, key=bounds.get)
    return bounds[what], what, procs


def spread(modules, heavy_share, cores, machines, a=0.035, heavy_ms=2253.0, small_ms=29.0, action_ms=25.0,
           dispatch_ms=0.3):
    """The wall time (ms) with the compiles spread over `machines` executors of `cores` each."""
    heavy = round(modules * heavy_share)
    work = heavy * (heavy_ms + action_ms) + (modules - heavy) * (small_ms + action_ms)
    slots = cores * machines
    per_machine = min(cores, max(1, modules // machines))
    wall = work / min(slots, modules) * (1 + a * (per_machine - 1))
    return max(wall, modules * dispatch_ms, heavy_ms + action_ms)


def pch_bound(heavy, cores, blocks=2, a=0.035, heavy_ms=2253.0, make=1.45, use=0.164):
    """A cold build of `heavy` header-heavy modules (in `blocks` include blocks) on `cores` workers:
    (wall without PCH, least wall with PCH). A block's PCH must be made before any of its modules
    uses it, so a PCH build takes at least one making plus one use (the chain), however many
    workers (unslowed here: favouring the PCH build); and at least its work (one making a block, a
    use for each other module) spread over the workers."""
    procs = min(cores, heavy)
    nopch = max(heavy * heavy_ms / procs * (1 + a * (procs - 1)), heavy_ms)  # as one_machine models it
    chain = (make + use) * heavy_ms
    work = (blocks * make + (heavy - blocks) * use) * heavy_ms / procs * (1 + a * (procs - 1))
    return nopch, max(chain, work)


def pch_table(cores):
    print(f"\nPCH at -j {cores} against none (two include blocks; making 1.45x a plain compile, a use 0.164x):")
    print(f"{'heavy':>6} {'per core':>9} {'no PCH s':>9} {'PCH >= s':>9} {'at most':>8}")
    for heavy in (8, 16, 24, 32, 48, 64, 96, 128):
        nopch, pch = pch_bound(heavy, cores)
        print(f"{heavy:>6} {heavy / cores:>9.1f} {nopch / 1e3:>9.2f} {pch / 1e3:>9.2f} {nopch / pch:>7.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modules", type=int, default=5000)
    ap.add_argument("--heavy-share", type=float, default=0.375)
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--mem-gib", type=float, default=128)
    ap.add_argument("--machines", type=int, nargs="*", default=[1, 2, 4, 8, 16, 32, 64])
    ap.add_argument("--check", action="store_true")
    o = ap.parse_args()
    if o.check:
        # the measured point: 64 modules (24 heavy) on 16 cores, 10.32x over one core
        one = one_machine(64, 24 / 64, 1, 128)[0]
        sixteen = one_machine(64, 24 / 64, 16, 128)[0]
        assert 9.5 < one / sixteen < 11.5, one / sixteen
        # a process per core cannot pass what one process in 1/a does: the per-machine ceiling
        c256 = one_machine(10000, 0.375, 256, 4096)[0]
        c1 = one_machine(10000, 0.375, 1, 4096)[0]
        assert c1 / c256 < 1 / 0.035, c1 / c256
        # memory bounds a machine before its cores when processes are large
        assert one_machine(5000, 0.375, 256, 64)[1] == "memory"
        # issue 62's project (24 header-heavy modules, 16 cores): the chain bounds a PCH build;
        # the model's no-PCH wall is the measured 4.2-5.4 s, and 3x is out of reach
        nopch, pch = pch_bound(24, 16)
        assert 4200 < nopch < 5400, nopch
        assert nopch / pch < 1.6, nopch / pch
        # with enough header-heavy modules a core, the chain stops bounding it and 3x is there
        nopch, pch = pch_bound(64, 16)
        assert nopch / pch > 3, nopch / pch
        print("CHECK scale_sim model: ok")
        return 0
    base, what, procs = one_machine(o.modules, o.heavy_share, 1, o.mem_gib)
    print(f"scale_sim: {o.modules} modules ({o.heavy_share:.0%} header-heavy), cold, no cache hits")
    print(f"{'cores':>6} {'procs':>6} {'wall s':>9} {'speed-up':>9}  bound by")
    for cores in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        wall, what, procs = one_machine(o.modules, o.heavy_share, cores, o.mem_gib)
        print(f"{cores:>6} {procs:>6} {wall / 1e3:>9.1f} {base / wall:>8.1f}x  {what}")
    ceiling = 1 / 0.035
    print(f"  one machine's ceiling: {ceiling:.0f}x over one process (compiles slow each other), "
          f"{o.mem_gib / 0.6:.0f} processes by memory")
    print(f"\n{'machines':>8} {'x cores':>8} {'wall s':>9} {'speed-up':>9}   (remote execution, {o.cores} cores each)")
    for m in o.machines:
        wall = spread(o.modules, o.heavy_share, o.cores, m)
        print(f"{m:>8} {m * o.cores:>8} {wall / 1e3:>9.1f} {base / wall:>8.1f}x")
    pch_table(o.cores)
    one16 = one_machine(o.modules, o.heavy_share, o.cores, o.mem_gib)[0]
    print(f"RESULT scale_one_machine_s={one16 / 1e3:.1f} scale_ceiling_x={ceiling:.1f} "
          f"scale_{max(o.machines)}_machines_s={spread(o.modules, o.heavy_share, o.cores, max(o.machines)) / 1e3:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
