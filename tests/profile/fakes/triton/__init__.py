"""A stand-in for Triton's hooks (knobs.compilation.listener, knobs.runtime.kernel_load_end_hook)
around a compile whose last stage runs the toolkit's ptxas as a subprocess, as Triton's does. The
knobs are laid out as Triton 3.4-3.6's triton/knobs.py: a class per group whose `listener` is a
class attribute (None) until set on the instance, with copy() and scope(); compile() reads the
listener once, first, and times its stages only when there is one."""
import contextlib
import os
import subprocess
import time
import types

__version__ = "0.0-fake"


class _Hook:
    def __init__(self):
        self.calls = []

    def add(self, f):
        self.calls.append(f)


class base_knobs:
    def copy(self):
        res = type(self)()
        res.__dict__.update(self.__dict__)
        return res

    @contextlib.contextmanager
    def scope(self):
        try:
            orig = dict(self.__dict__)
            yield
        finally:
            self.__dict__.clear()
            self.__dict__.update(orig)


class compilation_knobs(base_knobs):
    listener = None


knobs = types.SimpleNamespace(compilation=compilation_knobs(),
                              runtime=types.SimpleNamespace(kernel_load_end_hook=_Hook()))

PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry %s(.param .u64 x) { ret; }
"""


def compile(name, key, workdir, cache_hit=False):
    """Stages timed in microseconds as Triton's CompileTimes; returns the cubin path."""
    listener = knobs.compilation.listener
    times, stages = types.SimpleNamespace(ir_initialization=0, lowering_stages=[], store_results=0), []
    t = time.perf_counter()
    time.sleep(0.005)
    times.ir_initialization = int((time.perf_counter() - t) * 1e6)
    ptx, cubin = os.path.join(workdir, name + ".ptx"), os.path.join(workdir, name + ".cubin")
    for stage in ("ttir", "ttgir", "llir", "ptx", "cubin"):
        t = time.perf_counter()
        if stage == "ptx":
            open(ptx, "w").write(PTX % name)
        elif stage == "cubin" and not cache_hit:
            cuda = os.environ.get("CUDA_PATH", "/usr/local/cuda")
            subprocess.run([cuda + "/bin/ptxas", "-arch=sm_90", ptx, "-o", cubin], check=True)
        else:
            time.sleep(0.003)
        stages.append((stage, int((time.perf_counter() - t) * 1e6)))
    times.lowering_stages = stages
    if listener:
        listener(src=None, metadata={"name": name, "hash": key, "target": {"arch": 90}},
                 metadata_group={}, times=times, cache_hit=cache_hit)
    return cubin


def loaded(handle, name, key):
    for f in knobs.runtime.kernel_load_end_hook.calls:
        f(handle, None, name, {}, key)
