"""The Numba-CUDA, Warp and gstaichi adapters (the functions they time are stand-ins with the real
ones' parameter names, tests/python/hook_fakes): one unit per outermost compile on a thread, its
inner entry points as stages, the cache outcome each framework reports, names from the arguments
— and the framework's functions stay its own (watched through sys.monitoring, never replaced):
before Python 3.12, which has no sys.monitoring, the adapters register nothing and say so."""
import json
import sys

import pytest

from hookutil import fake_path, notes, other_python, records, run

PROG = fake_path() + r'''
import json, pickle, sys, threading
# numba-cuda, where installed, sends numba.cuda to its own package: the stand-in's here
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "NumbaCudaFinder"]
from numba.cuda import compiler, dispatcher
from warp._src import context
from gstaichi.lang import kernel

own = {}
def untouched(owner, name, module):
    f = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    return (not hasattr(f, "__wrapped__") and f.__code__.co_filename == module.__file__
            and f.__code__.co_name == name)
own["untouched"] = all([untouched(compiler, n, compiler) for n in ("compile_cuda", "compile", "compile_ptx")] +
                       [untouched(dispatcher.CUDADispatcher, "compile", dispatcher),
                        untouched(dispatcher.CUDACache, "load_overload", dispatcher),
                        untouched(context.Module, "load", context), untouched(context.Module, "_compile", context)] +
                       [untouched(kernel.Kernel, n, kernel) for n in ("__call__", "materialize", "launch_kernel")])

def saxpy(x): pass
def bad(x): pass
bad.bad = True
compiler.compile_ptx(saxpy, "(float32[:],)")
try:
    compiler.compile_ptx(bad, "(int32,)")
except ValueError:
    own["raised"] = True
compiler.compile(saxpy, "(float64[:],)")  # after a call that raised: a unit of its own again

def k2(x): pass
d = dispatcher.CUDADispatcher(k2, dispatcher.CUDACache({"(int32,)"}))
own["hit"] = d.compile("(int32,)")[0]
d.compile("(float32,)")

def worker(i):
    def fn(x): pass
    fn.__qualname__ = "thread_%d" % i
    for _ in range(3):
        compiler.compile_ptx(fn, "(int%d,)" % (8 * (i + 1)))
threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
for t in threads: t.start()
for t in threads: t.join()

m = context.Module("gj_mod")
m.load("cuda:0"); m.load("cuda:0")  # the second load compiles nothing: no unit
context.Module("gj_cached", cached=True).load("cuda:0")

def gj_taichi(x): pass
k = kernel.Kernel(gj_taichi)
own["launched"] = [k(1), k(2), k(3, 4)]
own["pickle"] = pickle.loads(pickle.dumps(compiler.compile_ptx)) is compiler.compile_ptx
print(json.dumps(own))
'''


def units_of(rec):
    return [x for x in records(rec) if x["k"] == "unit"]


def check(r, rec):
    assert r.returncode == 0, r.stderr
    own = json.loads(r.stdout)
    assert own["untouched"] is True, own
    assert own["raised"] and own["pickle"] and own["hit"] == "kernel from the cache" and own["launched"] == [1, 1, 2]
    assert not notes(rec), notes(rec)
    units = units_of(rec)
    by = {}
    for u in units:
        by.setdefault((u["fw"], u["name"]), []).append(u)
    numba = sorted(k[1] for k in by if k[0] == "numba")
    expected = ["k2(float32,)", "k2(int32,)", "saxpy(float32[:],)", "saxpy(float64[:],)"] + ["thread_%d(int%d,)" % (i, 8 * (i + 1)) for i in range(2)]
    # sys.monitoring sees no raising call before Python 3.15: bad() is no unit
    assert numba == sorted(expected), numba
    ptx = by[("numba", "saxpy(float32[:],)")][0]
    assert [s[0] for s in ptx["stages"]] == ["compile", "typing_lowering"] and ptx["cache"] == "miss", ptx
    assert ptx["t1"] - ptx["t0"] >= 2_000_000, ptx
    assert by[("numba", "k2(int32,)")][0]["cache"] == "hit" and by[("numba", "k2(float32,)")][0]["cache"] == "miss"
    assert all(len(by[("numba", "thread_%d(int%d,)" % (i, 8 * (i + 1)))]) == 3 for i in range(2)), by
    assert len({u["tid"] for u in units if u["name"].startswith("thread_")}) == 2
    assert [(u["name"], u["cache"]) for u in units if u["fw"] == "warp"] == [("gj_mod on cuda:0", "miss"), ("gj_cached on cuda:0", "hit")]
    taichi = [u for u in units if u["fw"] == "taichi"]
    assert [(u["name"], u["cache"]) for u in taichi] == [("gj_taichi", "miss"), ("gj_taichi", "miss")], taichi
    assert [s[0] for s in taichi[0]["stages"]] == ["front_end", "back_end_and_first_launch"], taichi[0]


def test_hook_compilers__watched_not_replaced(tmp_path):
    py = other_python("python3.13", "python3.12") if sys.version_info < (3, 12) else sys.executable
    if py is None:
        pytest.skip("no Python 3.12+ here (sys.monitoring)")
    r, rec = run(tmp_path, PROG, python=py)
    check(r, rec)


def test_hook_compilers__left_alone_before_312(tmp_path):
    # no sys.monitoring: nothing is put in a framework's place (the program's functions, results
    # and pickling as without the profile), no unit, and a note per adapter says why
    py = sys.executable if sys.version_info < (3, 12) else other_python("python3.11", "python3.10", "python3.9")
    if py is None:
        pytest.skip("no Python before 3.12 here")
    r, rec = run(tmp_path, PROG, python=py)
    assert r.returncode == 0, r.stderr
    own = json.loads(r.stdout)
    assert own["untouched"] is True, own
    assert own["raised"] and own["pickle"] and own["hit"] == "kernel from the cache" and own["launched"] == [1, 1, 2]
    assert not [u for u in units_of(rec) if u["fw"] in ("numba", "warp", "taichi")], units_of(rec)
    said = notes(rec)
    for adapter in ("numba", "warp", "taichi"):
        msg = said.get("adapter-" + adapter, "")
        assert "has no sys.monitoring" in msg and "not in this report" in msg, said
