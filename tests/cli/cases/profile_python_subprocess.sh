# exit: 0
# expect: *compiles: 2*
# expect: *names: after before*
# expect: *partial: False*
# expect: *noted: True*
# Python's subprocess starts children with vfork, which shares the parent's memory: gpujit's exec
# wrapper must touch nothing of the parent there. A program that runs a child with an
# environment of its own (as CuPy and cuda.core run ldconfig) and compiles before and after
# keeps both compiles; the child, its variables put back, says so in the report.
cat > prog.py <<'PY'
import ctypes, os, subprocess
cuda = os.environ.get("CUDA_PATH", "/usr/local/cuda")
nvrtc = ctypes.CDLL(cuda + "/lib64/libnvrtc.so.13")
def compile(name):
    prog = ctypes.c_void_p()
    src = b'extern "C" __global__ void %s(int *o) { *o = 1; }' % name.encode()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, name.encode(), 0, None, None) == 0
    assert nvrtc.nvrtcCompileProgram(prog, 0, None) == 0
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
compile("before")
subprocess.run(["/bin/true"], env={"LC_ALL": "C"}, check=True)
compile("after")
PY
$GPUJIT profile -q --json p.json -- python3 prog.py || echo "profile failed: $?"
python3 - <<'PY'
import json
p = json.load(open("p.json"))
print("compiles:", p["totals"]["compiles"])
print("names:", " ".join(sorted(c["name"] for c in p["compiles"])))
print("partial:", bool(p["totals"]["partial"]))
print("noted:", any("were put back" in n for n in p["notes"]))
PY
