# exit: 0
# expect: *top: nvcc 1 ms>0 True cpu>0 True*
# expect: *inside nvcc: cicc ptxas*
# expect: *ptxas alone: 1 result 0 arch sm_90 output 1 tied 1*
# expect: *failed ptxas: result 255*
# expect: *by compiler: nvcc: 1 compile,*
# expect: *totals: 3 compiles, 1 failed, compile_ms is the tops' sum: True*
# Toolchain programs started by the profiled program are compiles: ptxas alone, ptxas that fails
# (its status from the parent's wait), nvcc with its tools (cicc, ptxas; its gcc -E preprocessing is no compile) inside it, counted
# once. A cubin loaded later is tied to the ptxas that wrote it by content (the load is made up
# here: no GPU), so this checks the output hash against the file's own.
cuda=${CUDA_PATH:-/usr/local/cuda}
printf 'extern "C" __global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n' > k.cu
$GPUJIT build -q --emit ptx --arch sm_90 -o k.ptx k.cu 2>/dev/null || "$cuda/bin/nvcc" -ptx -arch=sm_90 k.cu -o k.ptx || exit 1
$GPUJIT profile -q --json p.json -- bash -c "$cuda/bin/ptxas -arch=sm_90 k.ptx -o k.cubin; $cuda/bin/ptxas -arch=sm_90 missing.ptx -o x.cubin 2>/dev/null; $cuda/bin/nvcc -cubin -arch=sm_90 k.cu -o k2.cubin; true" || echo "profile failed: $?"
python3 - <<'PY'
import json, subprocess
p = json.load(open("p.json"))
c = p["compiles"]
tops = [x for x in c if x["within"] < 0]
nvcc = [x for x in tops if x["kind"] == "nvcc"]
print("top: nvcc %d ms>0 %s cpu>0 %s" % (len(nvcc), nvcc[0]["ms"] > 0, nvcc[0]["cpu_ms"] > 0))
inner = sorted({x["kind"] for x in c if x["within"] == nvcc[0]["id"]})
print("inside nvcc: " + " ".join(inner))
alone = [x for x in tops if x["kind"] == "ptxas" and x["name"] == "ptxas k.ptx"]
size = len(open("k.cubin", "rb").read())
print("ptxas alone: %d result %d arch %s output %d tied %d" % (len(alone), alone[0]["result"],
      "sm_90" if "-arch=sm_90" in alone[0]["options"] else "?", alone[0]["cubin_bytes"] == size, alone[0]["module"] == "ptxas k.ptx"))
bad = [x for x in tops if x["name"] == "ptxas missing.ptx"]
print("failed ptxas: result %d" % bad[0]["result"])
t = p["totals"]
print("totals: %d compiles, %d failed, compile_ms is the tops' sum: %s" % (t["compiles"], t["failed"],
      abs(t["compile_ms"] - sum(x["ms"] for x in tops)) < 1e-6))
PY
$GPUJIT profile -- bash -c "$cuda/bin/nvcc -cubin -arch=sm_90 k.cu -o k3.cubin" 2>&1 | grep "by compiler"
