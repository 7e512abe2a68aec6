# exit: 0
# expect: *not imported before the program: True*
# expect: *own sitecustomize ran: True*
# expect: *xla: jit(f) miss 3 stages, jit(g) hit, jit(child) in a spawned child, jit(dash_c) from -c*
# expect: *xla ms = its stages: True*
# expect: *triton: k1 miss, ptxas inside it: True, stages ir_initialization ttir ttgir llir ptx cubin store_results*
# expect: *program's listener still called: 1*
# expect: *by compiler: xla: 4 compiles,*
# expect: *note once: 1*
# expect: *processes: at least 4 (main, spawned child, two subprocesses), adapters' files not counted: True*
# expect: *analyze modules: jit(child) jit(dash_c) jit(f) jit(g)*
# expect: *stages on the compiling thread: trace lower backend_compile*
# reject: *Traceback*
# The Python start-up hook in every Python process of the tree (a spawned child and -c too):
# adapters register only when the program imports their framework (here stand-ins of JAX's
# monitoring API and Triton's knobs, tests/profile/fakes), chain the program's own hooks, run the
# program's own sitecustomize, write a unit per compile with its stages; a ptxas a compile runs
# is inside it; an adapter that meets an API it does not know says so once and the program runs.
fakes=$(cd "$(dirname "$GPUJIT")/../tests/profile/fakes" 2>/dev/null && pwd || echo "$EXAMPLES/../tests/profile/fakes")
mkdir own && printf 'import os\nos.environ["OWN_SITECUSTOMIZE"] = "ran"\n' > own/sitecustomize.py
mkdir broken && mkdir broken/triton && printf '__version__ = "9.9"\nknobs = None\n' > broken/triton/__init__.py
cat > prog.py <<PY
import multiprocessing as mp, os, sys
sys.path.insert(0, "$fakes")
def child():
    import jax
    jax.jit_compile("child")
if __name__ == "__main__":
    print("not imported before the program:", "jax" not in sys.modules and "triton" not in sys.modules)
    print("own sitecustomize ran:", os.environ.get("OWN_SITECUSTOMIZE") == "ran")
    import jax, triton
    calls = []
    triton.knobs.compilation.listener = None
    jax.jit_compile("f")
    jax.jit_compile("g", hit=True)
    p = mp.get_context("spawn").Process(target=child); p.start(); p.join()
    import subprocess
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, '$fakes'); import jax; jax.jit_compile('dash_c')"], check=True)
    # broken: a Triton whose API the adapter does not know, in a child process; the child runs
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'broken'); import triton; print('broken triton imported')"], check=True)
PY
# the program's own listener, set before the adapter's (chained), is kept
cat > tri2.py <<PY
import sys, os
sys.path.insert(0, "$fakes")
import triton
calls = []
inner = triton.knobs.compilation.listener          # what is in the slot (the adapter's), called back
def mine(**kw):
    calls.append(kw["metadata"]["name"])
    if inner: inner(**kw)
triton.knobs.compilation.listener = mine           # set after the adapter: both run
cubin = triton.compile("k1", "hash-k1", os.getcwd())
triton.loaded(0x7000, "k1", "hash-k1")
print("program's listener still called:", len(calls))
PY
PYTHONPATH=$PWD/own $GPUJIT profile -q --json p.json --trace tr.json -- python3 prog.py || echo "profile failed: $?"
# the trace: each function a module of `trace analyze` (what trace diff gates on), its stages nested
echo "analyze modules: $($GPUJIT trace analyze --json tr.json | python3 -c 'import json,sys; print(" ".join(sorted(m["name"] for m in json.load(sys.stdin)["tables"]["modules"])))')"
python3 - <<'PY'
import json
t = json.load(open("tr.json"))["traceEvents"]
f = next(e for e in t if e.get("name") == "build jit(f)")
st = [e["name"] for e in t if e.get("cat") == "gpujit.stage" and e["tid"] == f["tid"] and f["ts"] <= e["ts"] <= f["ts"] + f["dur"]]
print("stages on the compiling thread:", " ".join(st))
PY
$GPUJIT profile -q --json t.json -- python3 tri2.py || echo "profile failed: $?"
python3 - <<'PY'
import json
p = json.load(open("p.json"))
c = {x["name"]: x for x in p["compiles"]}
st = {}
for s in p["stages"]:
    st.setdefault(s["compile"], []).append(s)
f, g = c["jit(f)"], c["jit(g)"]
print("xla: jit(f) %s %d stages, jit(g) %s, jit(child) %s, jit(dash_c) %s" % (
    f["cache"], len(st[f["id"]]), g["cache"],
    "in a spawned child" if c["jit(child)"]["pid"] != f["pid"] else "?",
    "from -c" if c["jit(dash_c)"]["pid"] not in (f["pid"], c["jit(child)"]["pid"]) else "?"))
print("xla ms = its stages:", abs(f["ms"] - (st[f["id"]][-1]["start_ms"] + st[f["id"]][-1]["ms"])) < 0.5)
print("note once:", sum("triton adapter could not register" in n for n in p["notes"]))
print("processes: at least 4 (main, spawned child, two subprocesses), adapters' files not counted:", 4 <= p["totals"]["processes"] == len(p["processes"]))
t = json.load(open("t.json"))
k1 = [x for x in t["compiles"] if x["kind"] == "triton"][0]
inner = [x for x in t["compiles"] if x["within"] == k1["id"]]
print("triton: k1 %s, ptxas inside it: %s, stages %s" % (k1["cache"], [x["kind"] for x in inner] == ["ptxas"],
      " ".join(s["name"] for s in t["stages"] if s["compile"] == k1["id"])))
PY
$GPUJIT profile -- python3 prog.py 2>&1 | grep "by compiler"
