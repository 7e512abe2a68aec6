"""gpujit's threads never outlive a call: after a cache hit the process is as single-threaded as
before, so the program's next os.fork() raises no DeprecationWarning ("use of fork() may lead to
deadlocks", Python 3.12+) and a forked child runs normally. Counted as the kernel counts them, as
Python's warning does: a helper joined but not yet let go by the kernel counts (base/crew.c waits
for that; tests/base/test_crew.c shows the gap). A failure names the threads: gpujit's helpers are
"gpujit-crew", a thread of another name is not gpujit's.

The miss is made by another process first: NVRTC 13 itself dlopens libcuda.so.1 inside
nvrtcCompileProgram, so on a machine with a driver a compile leaves the driver's threads
("cuda...") behind whoever calls NVRTC (seen on an H200); a hit calls no NVRTC and loads no
driver, so the process that only hits must stay single-threaded."""
import os
import subprocess
import sys

import pytest

# A toolkit header: the hit checks a group of hundreds of records, on helper threads.
SRC = ('#include <cuda/std/type_traits>\n'
       'extern "C" __global__ void gj_fork(float *x) { x[0] *= 2.0f; }\n')

CHILD = r'''
import os, sys
def names():  # the threads the kernel counts, by name (what a failure shows)
    out = []
    for t in os.listdir("/proc/self/task"):
        try:
            out.append(open(f"/proc/self/task/{t}/comm").read().strip())
        except OSError:
            out.append("(gone)")
    return out
seen = [("start", names())]
if len(seen[0][1]) != 1:  # this Python has threads before gpujit is imported: fork warns anyway
    print("SKIP this Python runs %d threads before gpujit is imported: %s" % (len(seen[0][1]), seen[0][1]))
    sys.exit(0)
import gpujit
seen.append(("import", names()))
src, cache = sys.argv[1], sys.argv[2]
assert gpujit.build(source=src, name="gj_fork.cu", cache=cache, arch="sm_90").cache_hit is True
seen.append(("hit", names()))
assert gpujit.build(source=src, name="gj_fork.cu", cache=cache, arch="sm_90").cache_hit is True
seen.append(("second hit", names()))
# each stage's threads, so a failure says which step left one (a CUDA driver thread, "cuda...",
# after a hit would mean the hit started the driver)
assert all(len(t) == 1 for _, t in seen), "threads by stage: %s" % seen
pid = os.fork()  # -W error::DeprecationWarning: raises on 3.12+ if another thread is alive
if pid == 0:
    os._exit(0 if gpujit.build(source=src, name="gj_fork.cu", cache=cache, arch="sm_90").cache_hit else 3)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
print("ok")
'''


MISS = r'''
import sys, gpujit
assert gpujit.build(source=sys.argv[1], name="gj_fork.cu", cache=sys.argv[2], arch="sm_90").cache_hit is False
'''


def test_fork_after_a_hit_warns_nothing(tmp_path):
    r = subprocess.run([sys.executable, "-c", MISS, SRC, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", CHILD, SRC, str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    if r.stdout.startswith("SKIP "):
        pytest.skip(r.stdout[5:].strip())
    assert r.stdout.strip() == "ok"
    assert "fork" not in r.stderr, r.stderr
