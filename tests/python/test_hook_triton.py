"""The Triton adapter leaves Triton as the program knows it: its knobs' class, copy(), scope(),
pickling and the program's own listener, which sees every compile in every thread (on a stand-in
of Triton 3.6's knobs and compile, tests/python/hook_fakes/triton)."""
import json
import shutil
import sys

import pytest

from hookutil import FAKES, fake_path, notes, other_python, records, run


def test_hook_triton__two_threads_every_call(tmp_path):
    r, rec = run(tmp_path, fake_path() + r'''
import threading, time, triton
seen = []
lock = threading.Lock()
def mine(*, src, metadata, metadata_group, times, cache_hit):
    time.sleep(0.001)  # long enough that the two threads' calls overlap
    with lock:
        seen.append(metadata["name"])
triton.knobs.compilation.listener = mine
def work(t):
    for i in range(50):
        triton.compile("k%d_%d" % (t, i))
threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
for t in threads: t.start()
for t in threads: t.join()
print("program's listener saw", len(seen), "distinct", len(set(seen)))
''')
    assert r.returncode == 0, r.stderr
    assert "program's listener saw 100 distinct 100" in r.stdout, r.stdout
    units = [x for x in records(rec) if x["k"] == "unit" and x["fw"] == "triton"]
    assert len(units) == 100 and len({u["name"] for u in units}) == 100


KNOBS = fake_path() + r'''
import copy, json, pickle, threading, triton
from triton import knobs
out = {}
comp = knobs.compilation
out["type"] = type(comp) is knobs.compilation_knobs
out["class default"] = knobs.compilation_knobs.listener is None
out["unset"] = comp.listener is None and "listener" not in vars(comp)
triton.compile("unset")                      # no listener of the program's: still recorded
calls = []
def mine(**kw):
    calls.append(kw["metadata"]["name"])
    out.setdefault("inside, reads back", knobs.compilation.listener is mine)
comp.listener = mine
out["is mine"] = comp.listener is mine and vars(comp)["listener"] is mine
with comp.scope():
    def other(**kw):
        calls.append("other:" + kw["metadata"]["name"])
    comp.listener = other
    triton.compile("scoped")
out["scope restored"] = comp.listener is mine
c = comp.copy()
out["copy"] = type(c) is knobs.compilation_knobs and c.listener is mine
d = copy.copy(comp)
out["copy.copy"] = d.listener is mine
p = pickle.loads(pickle.dumps(knobs.compilation_knobs()))
out["pickle"] = type(p) is knobs.compilation_knobs and p.listener is None and vars(p) == {}
del comp.listener
out["deleted"] = comp.listener is None
try:
    del comp.listener
    out["deleted twice raises"] = False
except AttributeError:
    out["deleted twice raises"] = True
comp.listener = mine
triton.compile("cached:hit")
out["calls"] = calls
print(json.dumps(out))
'''


def test_hook_triton__knobs_as_the_program_knows_them(tmp_path):
    r, rec = run(tmp_path, KNOBS)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    # the same program without gpujit gives the same answers
    bare, _ = run(tmp_path, KNOBS, records=False, pythonpath=[])
    assert bare.returncode == 0, bare.stderr
    assert got == json.loads(bare.stdout)
    assert all(v is True for k, v in got.items() if k != "calls"), got
    assert got["calls"] == ["other:scoped", "hit"]
    units = {x["name"]: x for x in records(rec) if x["k"] == "unit"}
    assert sorted(units) == ["hit", "scoped", "unset"]
    assert units["hit"]["cache"] == "hit" and units["scoped"]["cache"] == "miss"
    assert [s[0] for s in units["scoped"]["stages"]] == [
        "ir_initialization", "ttir", "ttgir", "llir", "ptx", "cubin", "store_results"]
    assert "adapter-triton" not in notes(rec)


def test_hook_triton__unknown_slot_said_once(tmp_path):
    # a Triton whose listener slot is not the plain attribute this adapter knows: a note, no records,
    # the program's listener untouched
    shutil.copytree(FAKES / "triton", tmp_path / "fakes" / "triton")
    knobs = tmp_path / "fakes" / "triton" / "knobs.py"
    knobs.write_text(knobs.read_text().replace(
        'listener: "CompilationListener | None" = None', 'listener = property(lambda s: s.__dict__.get("_l"), '
        'lambda s, v: s.__dict__.__setitem__("_l", v))'))
    r, rec = run(tmp_path, "import sys; sys.path.insert(0, %r)\n" % str(tmp_path / "fakes") + r'''
import triton
seen = []
triton.knobs.compilation.listener = lambda **kw: seen.append(1)
triton.compile("k")
print("seen", len(seen), type(triton.knobs.compilation_knobs.__dict__["listener"]).__name__)
''')
    assert r.returncode == 0, r.stderr
    assert "seen 1 property" in r.stdout
    assert "not a plain slot (property)" in notes(rec)["adapter-triton"]
    assert not [x for x in records(rec) if x["k"] == "unit"]


REAL = r'''
import json, pickle, threading
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

@triton.jit
def add(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

def go(B):  # a compile for sm_90 needs no GPU: Triton's own ptxas makes the cubin
    triton.compile(ASTSource(add, {"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32"}, {"B": B}),
                   target=GPUTarget("cuda", 90, 32))

comp, seen = triton.knobs.compilation, []
def mine(*, src, metadata, metadata_group, times, cache_hit):
    seen.append(triton.knobs.compilation.listener is mine)
comp.listener = mine
go(64)
with comp.scope():
    comp.listener = None
    go(128)
threads = [threading.Thread(target=go, args=(B,)) for B in (256, 512)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({"seen": seen, "restored": comp.listener is mine, "type": type(comp) is triton.knobs.compilation_knobs,
                  "pickle": type(pickle.loads(pickle.dumps(comp.copy()))) is triton.knobs.compilation_knobs}))
'''


def test_hook_triton__real_triton_on_the_cpu(tmp_path):
    pytest.importorskip("triton.knobs", reason="Triton (3.4+) is not installed: the stand-in alone is tested")
    r, rec = run(tmp_path, REAL, timeout=300, extra_env={"TRITON_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"seen": [True, True, True], "restored": True, "type": True, "pickle": True}
    units = [x for x in records(rec) if x["k"] == "unit"]
    assert len(units) == 4 and {u["name"] for u in units} == {"add"} and len({u["key"] for u in units}) == 4
    assert all([s[0] for s in u["stages"]][-2:] == ["cubin", "store_results"] for u in units)


AUTOTUNE = fake_path() + r'''
import sys, triton
from triton.runtime.autotuner import Autotuner, Config
mon = getattr(sys, "monitoring", None)
if mon is not None:
    mon.use_tool_id(4, "the program's own")  # the program holds a tool id: gpujit takes another
    mon.free_tool_id(4)
    mon.use_tool_id(4, "the program's own")  # and can take it again: gpujit took none before autotuning
def gj_tuned():
    pass
tuner = Autotuner(gj_tuned, [Config({"BLOCK": 256}), Config({"BLOCK": 1024})])
print("best", tuner.run(key=1), tuner.run(key=1), tuner.run(key=2))
if mon is not None:
    print("tool 4:", mon.get_tool(4))
'''


def test_hook_triton__autotuning_spans(tmp_path):
    """Each config's benchmark (Autotuner._bench) is a span of role autotune, named for the tuned
    function (Python 3.12+: sys.monitoring events local to that function, under a tool id the
    program does not hold); the program's own tool id and results are untouched."""
    py = other_python("python3.13", "python3.12") if sys.version_info < (3, 12) else sys.executable
    if py is None:
        pytest.skip("no Python 3.12+ here (sys.monitoring)")
    r, rec = run(tmp_path, AUTOTUNE, python=py)
    assert r.returncode == 0, r.stderr
    assert "best 256 256 256" in r.stdout and "tool 4: the program's own" in r.stdout, r.stdout
    spans = [x for x in records(rec) if x["k"] == "span"]
    assert len(spans) == 4, spans  # 2 configs for key 1, 2 for key 2; the cached call benchmarks nothing
    units = [x for x in records(rec) if x["k"] == "unit"]
    assert len(units) == 2  # each config compiled once, inside its first benchmark
    assert all(s["t0"] <= u["t0"] for s, u in zip(spans, units))  # the first benchmark from its compile on
    assert {s["role"] for s in spans} == {"autotune"} and {s["name"] for s in spans} == {"gj_tuned"}
    assert all(s["t1"] - s["t0"] >= 1_500_000 for s in spans), spans  # each benchmark slept 2 ms or more


def test_hook_triton__autotuning_without_monitoring(tmp_path):
    """Before Python 3.12 the autotuner's launches cannot be told apart: the report says so."""
    if sys.version_info >= (3, 12):
        pytest.skip("this Python has sys.monitoring")
    r, rec = run(tmp_path, AUTOTUNE)
    assert r.returncode == 0, r.stderr
    assert "best 256 256 256" in r.stdout
    assert not [x for x in records(rec) if x["k"] == "span"]
    assert any("sys.monitoring" in n for n in notes(rec).values()), notes(rec)
