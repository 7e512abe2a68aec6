#!/usr/bin/env python3
"""Write a records directory with steps (docs/record-format.md: "step", "launch"), as the injection
library leaves one under `--schedule`, for tests on a machine without a GPU. Every time is chosen so
the report's numbers can be worked out by hand (tests/cli/cases/profile_steps.sh says them):

process 5100 (schedule wait=2,warmup=1,active=2,repeat=1, steps from the API):
  steps 0-1 wait (no record): a kernel at 100 us, in no step
  step 2 warmup at 1000 us: one kernel
  step 3 active, 2000-3000 us: GPU 0 stream 7 gemm, relu, gemm, relu, bias (bias without a launch
    record: in the step by its GPU start); stream 9 a copy then gemm
  step 4 active, 3000-4000 us: ten 10 us kernels 100 us apart, each launched after the last ended
  "after" at 4000 us; a kernel at 4500 us (no step); exit at 5000 us
process 5200 (steps from torch, no schedule note): step 0 active at 1500 us, open at its exit
  (1900 us): one 380 us kernel on GPU 1 stream 3 — with correlation id 10, as one of 5100's has.

  make_step_records.py DIR
  make_step_records.py --many-names DIR   process 5300 alone: its active step 1 (1000-2000 us) runs 25
                                          kernels of 25 names, kernel kNN lasting NN+1 us (more names
                                          than a step's top kernels keep)
"""
import json
import os
import sys

T0 = 1_700_000_000_000_000_000  # host ns of the run's start; CUPTI's clock is T0 behind


def host(x):
    return T0 + int(x * 1000)


def gpu(x):
    return int(x * 1000)


def write(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def kernel(pid, name, stream, corr, s, e, device=0):
    return {"k": "kernel", "pid": pid, "tid": pid, "name": name, "module": "0x0", "device": device, "stream": stream,
            "corr": corr, "s": gpu(s), "e": gpu(e)}


def launch(pid, corr, t0, t1, api="cudaLaunchKernel", tid=None):
    return {"k": "launch", "pid": pid, "tid": tid or pid, "corr": corr, "api": api, "t0": host(t0), "t1": host(t1)}


def step(pid, n, t, phase, src="api", cycle=0):
    return {"k": "step", "pid": pid, "tid": pid, "n": n, "t": host(t), "phase": phase, "cycle": cycle, "src": src}


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    a, b = 5100, 5200
    r = [
        {"k": "proc", "v": 1, "pid": a, "tid": a, "ppid": 1, "exe": "/usr/bin/python3", "cmd": "python3 train.py",
         "t": host(0)},
        {"k": "clock", "pid": a, "tid": a, "cupti": 0, "host": T0},
        {"k": "note", "pid": a, "tid": a, "what": "schedule", "msg": "wait=2,warmup=1,active=2,repeat=1 (steps: api)",
         "t": host(1)},
        kernel(a, "wait_kernel", 7, 1, 100, 110),
        step(a, 2, 1000, "warmup"),
        launch(a, 2, 1010, 1015), kernel(a, "warm", 7, 2, 1020, 1030),
        step(a, 3, 2000, "active"),
        launch(a, 10, 2010, 2015), launch(a, 11, 2016, 2020),
        launch(a, 14, 2020, 2030, api="cudaMemcpyAsync", tid=a + 1),
        launch(a, 12, 2300, 2310), launch(a, 15, 2400, 2405), launch(a, 13, 2600, 2605),
        kernel(a, "_Z4gemmPfS_", 7, 10, 2020, 2220), kernel(a, "relu", 7, 11, 2225, 2245),
        kernel(a, "_Z4gemmPfS_", 7, 12, 2315, 2515), kernel(a, "relu", 7, 13, 2610, 2630),
        kernel(a, "bias", 7, 99, 2700, 2710),
        {"k": "copy", "pid": a, "tid": a, "what": "HtoD", "device": 0, "stream": 9, "corr": 14, "bytes": 4096,
         "s": gpu(2100), "e": gpu(2300)},
        kernel(a, "_Z4gemmPfS_", 9, 15, 2500, 2700),
        step(a, 4, 3000, "active"),
    ]
    for i in range(10):
        t0 = 3000 + 100 * i + 10
        r += [launch(a, 100 + i, t0, t0 + 20), kernel(a, "tiny", 7, 100 + i, t0 + 25, t0 + 35)]
    r += [
        step(a, 5, 4000, "after"),
        kernel(a, "late", 7, 500, 4500, 4520),
        {"k": "exit", "pid": a, "tid": a, "t": host(5000), "status": 0},
    ]
    write(os.path.join(d, "p%d-%d.jsonl" % (a, host(0))), r)
    write(os.path.join(d, "p%d-%d.jsonl" % (b, host(1400))), [
        {"k": "proc", "v": 1, "pid": b, "tid": b, "ppid": a, "exe": "/usr/bin/python3", "cmd": "python3 worker.py",
         "t": host(1400)},
        {"k": "clock", "pid": b, "tid": b, "cupti": 0, "host": T0},
        step(b, 0, 1500, "active", src="torch"),
        launch(b, 10, 1505, 1515), kernel(b, "big", 3, 10, 1520, 1900, device=1),
        {"k": "exit", "pid": b, "tid": b, "t": host(1900), "status": 0},
    ])


def many_names(d):
    c = 5300
    os.makedirs(d, exist_ok=True)
    r = [{"k": "proc", "v": 1, "pid": c, "tid": c, "ppid": 1, "exe": "/usr/bin/python3", "cmd": "python3 mlp.py",
          "t": host(0)},
         {"k": "clock", "pid": c, "tid": c, "cupti": 0, "host": T0},
         step(c, 1, 1000, "active")]
    for i in range(25):
        t0 = 1000 + 30 * i
        r += [launch(c, 1 + i, t0, t0 + 2), kernel(c, "k%02d" % i, 7, 1 + i, t0 + 3, t0 + 3 + i + 1)]
    r += [step(c, 2, 2000, "after"), {"k": "exit", "pid": c, "tid": c, "t": host(2100), "status": 0}]
    write(os.path.join(d, "p%d-%d.jsonl" % (c, host(0))), r)


if __name__ == "__main__":
    if sys.argv[1] == "--many-names":
        many_names(sys.argv[2])
    else:
        main()
