"""gpujit.profile in a plain ``python app.py`` (not started by ``gpujit profile``): the injection
library loaded in-process, the process's NVRTC callers rebound — gpujit's own compiles, a
ctypes-loaded NVRTC loaded before the block and after its start — the schedule's steps, the report
object, export_chrome_trace, and what cannot be seen named in the notes (a function object resolved
before the block; without a CUDA driver, the GPU side). Each case runs in a fresh interpreter: what a
block rebinds is the process's."""
import glob
import json
import os
import subprocess
import sys

import pytest

import gpujit


def _driver():
    """Whether this machine has a CUDA driver (the in-process profile attaches CUPTI to it)."""
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def _nvrtc():
    """A libnvrtc to load with ctypes: the toolkit's."""
    roots = [os.environ.get("CUDA_HOME") or "", "/usr/local/cuda"]
    for root in roots:
        found = sorted(glob.glob(os.path.join(root, "lib64", "libnvrtc.so.*[0-9]")) +
                       glob.glob(os.path.join(root, "lib", "libnvrtc.so.*[0-9]")))
        if root and found:
            return found[0]
    pytest.skip("no libnvrtc in the toolkit (CUDA_HOME, /usr/local/cuda)")


PRELUDE = r'''
import ctypes, json, os, sys
import gpujit

SRC = b'extern "C" __global__ void k(float *x) { x[0] = 1; }'


def compile_with(lib, name, compile_fn=None):
    """One NVRTC compile through `lib`; each function looked up now (lib[...] makes a new ctypes
    function object, through dlsym), or `compile_fn` resolved earlier."""
    prog = ctypes.c_void_p()
    assert lib["nvrtcCreateProgram"](ctypes.byref(prog), SRC, name.encode(), 0, None, None) == 0
    opts = (ctypes.c_char_p * 1)(b"--gpu-architecture=compute_75")
    r = (compile_fn or lib["nvrtcCompileProgram"])(prog, 1, opts)
    lib["nvrtcDestroyProgram"](ctypes.byref(prog))
    assert r == 0, r


def names(p):
    return sorted(os.path.basename(c["name"]) for c in p.data["compiles"] if c["kind"] == "nvrtc")
'''

BEFORE = PRELUDE + r'''
lib = ctypes.CDLL(sys.argv[1])          # NVRTC loaded before the block
held = lib["nvrtcCompileProgram"]       # a ctypes function object made before it: rebound for the block
gpujit.build(source='extern "C" __global__ void warm(float *x) { x[0] = 0; }', name="warm.cu", cache=False)
compile_with(lib, "outside_before.cu")
sched = gpujit.schedule(wait=1, warmup=1, active=2)
with gpujit.profile(schedule=sched) as p:
    for i in range(5):                  # steps 0..4 (step 5 begins at the last p.step())
        compile_with(lib, "step%d.cu" % i)
        p.step()
    compile_with(lib, "held.cu", compile_fn=held)
    gpujit.build(source='extern "C" __global__ void own(float *x) { x[0] = 2; }', name="own.cu", cache=False)
compile_with(lib, "outside_after.cu", compile_fn=held)
p.export_chrome_trace(sys.argv[2])
print(json.dumps({"names": names(p), "report": p.report(), "report_attr": str(p.report), "notes": p.notes,
                  "steps": [(s["step"], s["verdict"], s["complete"], s["src"], s["schedule"]) for s in p.steps],
                  "totals": p.totals, "inprocess": p.inprocess}))
'''

AFTER = PRELUDE + r'''
with gpujit.profile() as p:
    lib = ctypes.CDLL(sys.argv[1])      # NVRTC loaded after the block began
    compile_with(lib, "loaded_inside.cu")
with gpujit.profile() as q:             # a second block of the same process: its own records only
    compile_with(lib, "second_block.cu")
libc_getenv = ctypes.CDLL(None).getenv
libc_getenv.restype = ctypes.c_char_p
with gpujit.profile(steps="nvtx:step") as r:  # NVTX's injection was not set when this process started
    inside = libc_getenv(b"NVTX_INJECTION64_PATH")  # the injection library, for NVTX's first calls
after = libc_getenv(b"NVTX_INJECTION64_PATH")
print(json.dumps({"first": names(p), "second": names(q), "notes": q.notes, "nvtx_notes": r.notes,
                  "nvtx_env": [(inside or b"").decode(), (after or b"").decode()]}))
'''


ASIDE = PRELUDE + r'''
import types
torch = types.ModuleType("torch")  # the program's torch.profiler recording (as torch reports it)
torch._C = types.SimpleNamespace(_autograd=types.SimpleNamespace(_profiler_enabled=lambda: True))
sys.modules["torch"] = torch
with gpujit.profile() as p:
    compile_with(ctypes.CDLL(sys.argv[1]), "aside.cu")
print(json.dumps({"names": names(p), "notes": p.notes}))
'''


def _run(tmp_path, script, *args):
    path = tmp_path / "app.py"
    path.write_text(script)
    env = dict(os.environ)
    for k in list(env):  # a plain `python app.py`: nothing of `gpujit profile` around it
        if k.startswith("GPUJIT_PROFILE") or k in ("CUDA_INJECTION64_PATH",):
            del env[k]
    env["GPUJIT_CACHE_DIR"] = str(tmp_path / "cache")
    r = subprocess.run([sys.executable, str(path)] + [str(a) for a in args], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_inproc_nvrtc_steps_report_trace(tmp_path):
    trace = tmp_path / "trace.json"
    got = _run(tmp_path, BEFORE, _nvrtc(), trace)
    assert got["inprocess"] is True
    # NVRTC loaded before the block, each function looked up inside it: every compile of the block
    # is seen, gpujit's own too (its NVRTC resolved before the block, in its own table), and the one
    # through a ctypes function object made before the block; the ones outside the block are not
    # in it (the one after it goes through that function object again, put back)
    assert got["names"] == ["held.cu", "own.cu", "step0.cu", "step1.cu", "step2.cu", "step3.cu", "step4.cu"], \
        got["names"]
    assert got["totals"]["compiles"] == 7
    # wait=1, warmup=1, active=2: steps 2 and 3 active, as torch.profiler.schedule chooses them;
    # without a GPU they launched nothing
    assert [s[:4] for s in got["steps"]] == [[2, "no-gpu-work", True, "api"], [3, "no-gpu-work", True, "api"]]
    assert got["steps"][0][4].startswith("wait=1,warmup=1,active=2,repeat=0,skip_first=0")
    # the report: p.report() and p.report are one text
    assert got["report"] == got["report_attr"] and "JIT compile" in got["report"]
    assert "step 2:" in got["report"] and "step 3:" in got["report"]
    notes = "\n".join(got["notes"])
    assert "in-process profile" in notes and "child processes are not followed" in notes
    assert "resolved before the profile began" in notes
    if _driver():  # CUPTI attached at the first warmup step (step 1): the GPU side recorded, empty
        assert "no CUDA driver" not in notes and "CUPTI" not in notes, notes
        assert got["totals"]["gpu_recorded"] is True and got["totals"]["launches"] == 0, got["totals"]
        assert "GPU: nothing ran" in got["report"], got["report"]
    else:  # the GPU side, and why it is missing
        assert "no CUDA driver in this process" in notes, notes
        assert got["totals"]["gpu_recorded"] is False, got["totals"]
        assert "GPU: not recorded" in got["report"], got["report"]
    # the Trace Event Format file: valid JSON, the block's compiles in it
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert any("step1.cu" in json.dumps(e) for e in events)
    assert not any("outside_after.cu" in json.dumps(e) for e in events)


def test_inproc_nvrtc_loaded_inside_and_second_block(tmp_path):
    got = _run(tmp_path, AFTER, _nvrtc())
    assert got["first"] == ["loaded_inside.cu"]
    assert got["second"] == ["second_block.cu"]
    assert any("in-process profile" in n for n in got["notes"])
    # steps from NVTX in-process: the block names the injection library for NVTX's first calls
    # inside it (a copy of NVTX that called before is not seen: said), and unsets it after
    assert any("whose first NVTX call comes after the profile began" in n and "nvtx:step" in n
               for n in got["nvtx_notes"]), got["nvtx_notes"]
    assert "gpujit_inject" in got["nvtx_env"][0] and got["nvtx_env"][1] == "", got["nvtx_env"]
    assert not any("NVTX" in n for n in got["notes"])


def test_inproc_steps_aside_for_the_programs_profiler(tmp_path):
    got = _run(tmp_path, ASIDE, _nvrtc())
    assert got["names"] == ["aside.cu"]  # compiles are still seen
    notes = "\n".join(got["notes"])
    assert "torch.profiler was recording when the block began: gpujit stepped aside" in notes
    assert "CUPTI was left to the program" in notes and "no CUDA driver" not in notes


def test_inproc_refuses_a_bad_schedule():
    with pytest.raises(gpujit.InvalidArgumentError, match="active must be given"):
        with gpujit.profile(schedule="wait=3"):
            pass
    with pytest.raises(TypeError, match="gpujit.schedule"):
        gpujit.profile(schedule=3)


def test_inproc_export_before_the_end():
    p = gpujit.profile()
    with pytest.raises(gpujit.InvalidArgumentError, match="has not ended"):
        p.export_chrome_trace("x.json")
