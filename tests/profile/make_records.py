#!/usr/bin/env python3
"""Write a records directory as `gpujit profile` leaves one (docs/record-format.md), for tests that
need kernels, copies and memsets on a machine without a GPU: two processes, NVRTC compiles (one a
repeat, one failed), a Triton compile in the child, module loads tied to them by content or by
Triton's handle, launches on two devices, copies, a memset, an NVTX range — and, with --hostile,
names made to break a page that does not escape them; with --regions, the kernel regions the
injection library read in saxpy's module (two reads: a region nested in another) and in scale's
(every event dropped), with some of saxpy's calls for the trace.

  make_records.py DIR [--hostile] [--launches N] [--long-paths] [--regions]
"""
import argparse
import json
import os

T0 = 1_700_000_000_000_000_000  # host ns of the run's start; CUPTI's clock is T0 behind
H_SAXPY = "5a" * 16
H_SCALE = "5c" * 16
H_EVIL = "ee" * 16
H_TRITON = "77" * 16
LONG_PATH = "/home/you/projects/a-checkout-with-a-long-name/src/kernels/elementwise/broadcasting/scale.cu"
HOSTILE = "</script><img src=x onerror=\"document.title='pwned'\">'&\u2028"


def us(x):
    return T0 + int(x * 1000)


def write(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def regions(pid, end):
    """What the injection library writes for bound modules: saxpy's (0xa1) read at a step's end and
    at exit — "load" (1280 + 640 calls) with "reduce" nested in it (1280 calls, the first read
    only) — and scale's (0xa3), whose every event was dropped; four of saxpy's calls for the trace
    (globaltimer ns, on CUPTI's clock: the process's clock record moves them)."""
    def read(n, at, module, **kw):
        base = {"k": "kregions", "pid": pid, "tid": pid, "t": us(end + 4000 + n), "read": n, "at": at,
                "module": module, "scope": "warp"}
        base.update(kw)
        return base
    one = dict(events=5120, dropped=0, unmatched=2, launches=20, min_cycles=310, regions=2)
    two = dict(events=1280, dropped=0, unmatched=0, launches=10, min_cycles=305, regions=1)
    t0 = 141000_000
    return [
        read(1, "step", "0xa1", **one, i=0, name="load", depth=0, calls=1280, cyc=[1000.5, 1000, 1010, 1200],
             ns=[520, 500, 600, 900], total_ns=665600, sm_imb=1.02, unit_imb=1.5, sms=132, units=40),
        read(1, "step", "0xa1", **one, i=1, name="reduce", depth=1, calls=1280, cyc=[400, 400, 410, 450],
             ns=[200, 200, 210, 240], total_ns=256000, sm_imb=1.01, unit_imb=1.1, sms=132, units=40),
        {"k": "kslices", "pid": pid, "tid": pid, "t": us(end + 4001), "read": 1, "at": "step", "module": "0xa1",
         "t0": t0, "i": [0, 1, 0, 1], "sm": [0, 0, 1, 1], "unit": [0, 0, 1, 1], "s": [0, 100, 50, 150],
         "d": [600, 300, 620, 310], "c": [1000, 400, 1010, 405]},
        read(2, "exit", "0xa1", **two, i=0, name="load", depth=0, calls=640, cyc=[1003.5, 1002, 1020, 1300],
             ns=[530, 510, 640, 1000], total_ns=339200, sm_imb=1.04, unit_imb=1.3, sms=132, units=20),
        read(3, "exit", "0xa3", events=0, dropped=77, unmatched=0, launches=1, min_cycles=0, regions=0),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--hostile", action="store_true", help="kernel, program and command names with markup in them")
    ap.add_argument("--launches", type=int, default=300, help="launches of saxpy drawn (the ksum says the same)")
    ap.add_argument("--long-paths", action="store_true", help="scale.cu named by a long absolute path (a page wraps it)")
    ap.add_argument("--regions", action="store_true", help="kregions and kslices records (docs/record-format.md)")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    evil = HOSTILE if a.hostile else "bias_add"
    cmd = "python3 train.py" + (" --tag '" + HOSTILE + "'" if a.hostile else "")
    main_pid, child = 4100, 4101
    r = [
        {"k": "proc", "v": 1, "pid": main_pid, "tid": main_pid, "ppid": 1, "exe": "/usr/bin/python3", "cmd": cmd, "t": us(0)},
        {"k": "clock", "pid": main_pid, "tid": main_pid, "cupti": 0, "host": T0},
        {"k": "nvrtc", "pid": main_pid, "tid": main_pid, "name": "saxpy.cu", "src_hash": "a1" * 16, "headers": 0,
         "options": ["--gpu-architecture=sm_90"], "t0": us(1000), "t1": us(41000), "result": 0,
         "cubin_bytes": 4096, "cubin_hash": H_SAXPY},
        {"k": "load", "pid": main_pid, "tid": main_pid, "api": "cuModuleLoadData", "t0": us(41500), "t1": us(42700),
         "result": 0, "image": "cubin", "bytes": 4096, "hash": H_SAXPY, "module": "0xa1"},
        {"k": "nvrtc", "pid": main_pid, "tid": main_pid, "name": "saxpy.cu", "src_hash": "a1" * 16, "headers": 0,
         "options": ["--gpu-architecture=sm_90"], "t0": us(43000), "t1": us(80000), "result": 0,
         "cubin_bytes": 4096, "cubin_hash": H_SAXPY},
        {"k": "nvrtc", "pid": main_pid, "tid": main_pid, "name": LONG_PATH if a.long_paths else "scale.cu",
         "src_hash": "b2" * 16, "headers": 2,
         "options": [], "t0": us(81000), "t1": us(95000), "result": 0, "cubin_bytes": 2048, "cubin_hash": H_SCALE},
        {"k": "load", "pid": main_pid, "tid": main_pid, "api": "cuModuleLoadData", "t0": us(95500), "t1": us(95900),
         "result": 0, "image": "cubin", "bytes": 2048, "hash": H_SCALE, "module": "0xa3"},
        {"k": "nvrtc", "pid": main_pid, "tid": main_pid, "name": (evil + ".cu"), "src_hash": "c3" * 16, "headers": 0,
         "options": [], "t0": us(96000), "t1": us(126000), "result": 0, "cubin_bytes": 1024, "cubin_hash": H_EVIL},
        {"k": "load", "pid": main_pid, "tid": main_pid, "api": "cuModuleLoadData", "t0": us(126500), "t1": us(127000),
         "result": 0, "image": "cubin", "bytes": 1024, "hash": H_EVIL, "module": "0xa2"},
        {"k": "nvrtc", "pid": main_pid, "tid": main_pid, "name": "broken.cu", "src_hash": "d4" * 16, "headers": 0,
         "options": [], "t0": us(127500), "t1": us(131000), "result": 6,
         "log": "broken.cu(3): error: identifier \"x\" is undefined"},
        {"k": "nvtx", "pid": main_pid, "tid": main_pid, "name": "train step", "domain": "", "thread": main_pid,
         "s": 140000_000, "e": (140000 + 20 * a.launches + 900) * 1000},  # CUPTI's clock, as kernels
        {"k": "copy", "pid": main_pid, "what": "HtoD", "device": 0, "stream": 7, "corr": 1, "bytes": 1 << 20,
         "s": 139000_000, "e": 139400_000},
        {"k": "memset", "pid": main_pid, "what": "device", "device": 0, "stream": 7, "corr": 2, "bytes": 1 << 16,
         "s": 139500_000, "e": 139520_000},
    ]
    for i in range(a.launches):  # saxpy: 12 us every 20 us
        r.append({"k": "kernel", "pid": main_pid, "name": "_Z5saxpyIfEviT_PKS0_PS0_", "module": "0xa1", "device": 0,
                  "stream": 7, "corr": 10 + i, "s": (140000 + 20 * i) * 1000, "e": (140012 + 20 * i) * 1000})
    end = 140000 + 20 * a.launches
    r += [
        {"k": "kernel", "pid": main_pid, "name": "_Z5scalePfi", "module": "0xa3", "device": 0, "stream": 7,
         "corr": 5, "s": (end + 100) * 1000, "e": (end + 600) * 1000},
        {"k": "kernel", "pid": main_pid, "name": evil, "module": "0xa2", "device": 0, "stream": 7,
         "corr": 6, "s": (end + 700) * 1000, "e": (end + 750) * 1000},
        {"k": "copy", "pid": main_pid, "what": "DtoH", "device": 0, "stream": 7, "corr": 7, "bytes": 1 << 20,
         "s": (end + 800) * 1000, "e": (end + 1200) * 1000},
        {"k": "ksum", "pid": main_pid, "module": "0xa1", "name": "_Z5saxpyIfEviT_PKS0_PS0_", "device": 0,
         "n": a.launches, "ns": 12000 * a.launches},
        {"k": "ksum", "pid": main_pid, "module": "0xa3", "name": "_Z5scalePfi", "device": 0, "n": 1, "ns": 500000},
        {"k": "ksum", "pid": main_pid, "module": "0xa2", "name": evil, "device": 0, "n": 1, "ns": 50000},
        {"k": "osum", "pid": main_pid, "op": "copy", "what": "HtoD", "device": 0, "n": 1, "bytes": 1 << 20, "ns": 400000},
        {"k": "osum", "pid": main_pid, "op": "copy", "what": "DtoH", "device": 0, "n": 1, "bytes": 1 << 20, "ns": 400000},
        {"k": "osum", "pid": main_pid, "op": "memset", "what": "device", "device": 0, "n": 1, "bytes": 1 << 16, "ns": 20000},
        {"k": "gpu_end", "pid": main_pid, "tid": main_pid, "traced": a.launches + 5, "untraced": 0, "unattributed": 0},
        {"k": "exit", "pid": main_pid, "tid": main_pid, "t": us(end + 5000), "status": 0, "lost": 0},
    ]
    if a.regions:
        r[-1:-1] = regions(main_pid, end)
    write(os.path.join(a.dir, "p%d-%d.jsonl" % (main_pid, us(0))), r)
    # the child: a Triton kernel compiled (its adapter's file) and launched on GPU 1
    c = [
        {"k": "proc", "v": 1, "pid": child, "tid": child, "ppid": main_pid, "exe": "/usr/bin/python3",
         "cmd": "python3 worker.py" + (" " + HOSTILE if a.hostile else ""), "t": us(20000)},
        {"k": "clock", "pid": child, "tid": child, "cupti": 0, "host": T0},
        {"k": "load", "pid": child, "tid": child, "api": "cuModuleLoadData", "t0": us(60500), "t1": us(61500),
         "result": 0, "image": "cubin", "bytes": 8192, "hash": H_TRITON, "module": "0xb1"},
        {"k": "kernel", "pid": child, "name": "fused_add_kernel", "module": "0xb1", "device": 1, "stream": 3,
         "corr": 1, "s": 62000_000, "e": 62300_000},
        {"k": "ksum", "pid": child, "module": "0xb1", "name": "fused_add_kernel", "device": 1, "n": 1, "ns": 300000},
        {"k": "exit", "pid": child, "tid": child, "t": us(70000), "status": 0, "lost": 0},
    ]
    write(os.path.join(a.dir, "p%d-%d.jsonl" % (child, us(20000))), c)
    adapter = [
        {"k": "proc", "v": 1, "pid": child, "tid": child, "ppid": main_pid, "writer": "python", "t": us(20001)},
        {"k": "unit", "pid": child, "tid": child, "fw": "triton", "name": "fused_add_kernel", "key": "tk",
         "t0": us(21000), "t1": us(60000), "cache": "miss",
         "stages": [["ttir", us(21000), us(25000)], ["ptx", us(25000), us(45000)], ["cubin", us(45000), us(60000)]]},
        {"k": "bind", "pid": child, "tid": child, "fw": "triton", "key": "tk", "module": "0xb1"},
    ]
    write(os.path.join(a.dir, "p%d-%d.jsonl" % (child, us(20001))), adapter)


if __name__ == "__main__":
    main()
