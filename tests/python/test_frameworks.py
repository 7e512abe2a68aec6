"""The profile's framework adapters against real frameworks on the CPU: JAX's CPU backend fires the
same compile events as its GPU one. Under `gpujit profile`, each jitted function is a compile of
origin xla whose time is JAX's own measure; gpujit.profile() sees a block's functions."""
import json
import subprocess
import sys

import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install jax): the XLA adapter is untested here")

PROGRAM = r'''
import json, sys
import jax, jax.numpy as jnp, jax.monitoring as mon
import gpujit
own = {}
def listen(ev, secs, **kw):
    if ev.startswith("/jax/core/compile/"):
        n = kw.get("fun_name", "?")
        n = n if n.startswith("jit(") else "jit(%s)" % n
        own[n] = own.get(n, 0.0) + secs * 1e3
mon.register_event_duration_secs_listener(listen)
x = jnp.arange(1000.0)

@jax.jit
def before(v):
    return v + 1

before(x).block_until_ready()
with gpujit.profile(print=False) as p:
    @jax.jit
    def inside(v):
        return jnp.sin(v) * 2 + v
    for _ in range(3):
        inside(x).block_until_ready()
print(json.dumps({"own": own, "block": [(m["name"], m["origin"], m["compile_ms"]) for m in p.modules]}))
'''


def test_jax_functions_under_the_profile(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    out = tmp_path / "p.json"
    r = subprocess.run([sys.executable, "-m", "gpujit", "profile", "-q", "--json", str(out), "--", sys.executable,
                        str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    p = json.loads(out.read_text())
    rows = {m["name"]: m for m in p["modules"] if m["origin"] == "xla"}
    for name in ("jit(before)", "jit(inside)"):
        assert name in rows, (name, list(rows))
        own = got["own"][name]
        # JAX's own measure, within 5 % or 2 ms; one compile each (the later calls hit jit's cache)
        assert abs(rows[name]["compile_ms"] - own) <= max(2.0, 0.05 * own), (name, rows[name]["compile_ms"], own)
        assert rows[name]["compiles"] == 1
    stages = {s["name"] for s in p["stages"]}
    assert {"trace", "lower", "backend_compile"} <= stages
    xla = next(c for c in p["compilers"] if c["compiler"] == "xla")
    assert xla["compiles"] == len([c for c in p["compiles"] if c["kind"] == "xla"]) >= 2
    # the block: its function alone, not the one compiled before it
    assert [b[:2] for b in got["block"]] == [["jit(inside)", "xla"]]


NUMBA = r'''
import time
from numba import cuda, float32
def gj_twice(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = x[i] * 2.0
t = time.perf_counter()
ptx, _ = cuda.compile_ptx(gj_twice, (float32[:], float32[:]), cc=(9, 0))
print("OWN %.3f" % ((time.perf_counter() - t) * 1e3))
'''

WARP = r'''
import sys, time
import warp as wp
wp.config.kernel_cache_dir = sys.argv[1]
wp.config.quiet = True
wp.init()
@wp.kernel
def gj_scale(x: wp.array(dtype=float), s: float):
    i = wp.tid()
    x[i] = x[i] * s
x = wp.zeros(100, dtype=float, device="cpu")
t = time.perf_counter()
wp.load_module(device="cpu")
print("OWN %.3f" % ((time.perf_counter() - t) * 1e3))
for _ in range(3):
    wp.launch(gj_scale, dim=100, inputs=[x, 2.0], device="cpu")
'''


def _profiled(tmp_path, source, *args):
    script = tmp_path / "prog.py"
    script.write_text(source)
    out = tmp_path / ("p%d.json" % len(list(tmp_path.glob("p*.json"))))
    r = subprocess.run([sys.executable, "-m", "gpujit", "profile", "-q", "--json", str(out), "--", sys.executable,
                        str(script)] + list(args), capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    own = float(next(l.split()[1] for l in r.stdout.splitlines() if l.startswith("OWN ")))
    return json.loads(out.read_text()), own


# the Numba-CUDA, Warp and Taichi adapters watch through sys.monitoring (3.12+); before it they
# put nothing in the framework's place and register nothing: the program runs as without the
# profile, its framework's compiles are in no row, and a note says so
WATCHED = sys.version_info >= (3, 12)


def left_alone(p, kind):
    assert not [c for c in p["compiles"] if c["kind"] == kind], p["compiles"]
    said = [str(n) for n in p["notes"] if "the %s adapter" % kind in str(n)]
    assert said and "has no sys.monitoring" in said[0] and "not in this report" in said[0], p["notes"]


def test_numba_cuda_compile_under_the_profile(tmp_path):
    # NVIDIA's numba-cuda (the adapter's reference); Numba's own deprecated numba.cuda is not verified
    pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (pip install 'numba-cuda[cu13]')")
    # the same program without gpujit first: an installed numba-cuda that cannot compile here
    # (numba-cuda 0.30 against NumPy 2.5, which dropped np.row_stack) is the environment's fault
    (tmp_path / "alone.py").write_text(NUMBA)
    alone = subprocess.run([sys.executable, str(tmp_path / "alone.py")], capture_output=True, text=True, timeout=300)
    if alone.returncode != 0:
        pytest.skip("numba-cuda fails here without gpujit too: " + alone.stderr.strip().splitlines()[-1])
    p, own = _profiled(tmp_path, NUMBA)
    if not WATCHED:
        return left_alone(p, "numba")
    units = [c for c in p["compiles"] if c["kind"] == "numba"]
    assert [u["name"] for u in units] == ["gj_twice(array(float32, 1d, A), array(float32, 1d, A))"]
    u = units[0]
    # the whole compile, as the program timed it; libNVVM inside it, counted once
    assert abs(u["ms"] - own) <= max(2.0, 0.05 * own), (u["ms"], own)
    nvvm = [c for c in p["compiles"] if c["kind"] == "nvvm"]
    assert nvvm and all(c["within"] == u["id"] for c in nvvm)
    assert p["totals"]["compiles"] == 1
    assert {"typing_lowering"} <= {s["name"] for s in p["stages"] if s["compile"] == u["id"]}


def test_warp_module_under_the_profile(tmp_path):
    pytest.importorskip("warp", reason="warp-lang is not installed (pip install warp-lang)")
    cache = str(tmp_path / "kernels")
    for expect in ("miss", "hit"):  # compiled, then served by Warp's kernel cache
        p, own = _profiled(tmp_path, WARP, cache)
        if not WATCHED:
            left_alone(p, "warp")
            continue
        units = [c for c in p["compiles"] if c["kind"] == "warp"]
        assert len(units) == 1 and units[0]["name"].endswith("on cpu"), units
        assert units[0]["cache"] == expect
        assert abs(units[0]["ms"] - own) <= max(2.0, 0.05 * own), (units[0]["ms"], own)


TAICHI = r'''
import sys, time
import gstaichi as ti
ti.init(arch=ti.cpu, offline_cache_file_path=sys.argv[1])
x = ti.field(ti.f32, shape=1000)
@ti.kernel
def gj_fill(s: ti.f32):
    for i in x:
        x[i] = i * s
t = time.perf_counter()
gj_fill(2.0)
ti.sync()
print("OWN %.3f" % ((time.perf_counter() - t) * 1e3))
for _ in range(3):
    gj_fill(3.0)
'''


def test_gstaichi_kernel_under_the_profile(tmp_path):
    pytest.importorskip("gstaichi", reason="gstaichi is not installed (pip install gstaichi)")
    cache = str(tmp_path / "offline")
    for expect in ("miss", "hit"):  # compiled, then served by the offline cache
        p, own = _profiled(tmp_path, TAICHI, cache)
        if not WATCHED:
            left_alone(p, "taichi")
            continue
        units = [c for c in p["compiles"] if c["kind"] == "taichi"]
        assert [(u["name"], u["cache"]) for u in units] == [("gj_fill", expect)]  # later calls compile nothing
        assert abs(units[0]["ms"] - own) <= max(2.0, 0.05 * own), (units[0]["ms"], own)
        stages = [s["name"] for s in p["stages"] if s["compile"] == units[0]["id"]]
        assert stages == ["front_end", "back_end_and_first_launch"]
