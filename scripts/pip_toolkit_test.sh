#!/usr/bin/env bash
# gpujit as users get it: the manylinux_2_28 wheel of scripts/wheel.sh in a fresh venv with
# NVIDIA's nvidia-cuda-nvrtc, nvidia-nvjitlink and nvidia-cuda-cccl (CUDA 13) wheels, the system
# toolkit hidden (/usr/local/cuda* covered in a private mount namespace, CUDA_PATH/CUDA_HOME
# unset): a module with a CCCL header builds and then hits the cache, from Python and from the
# environment's gpujit command (a native program, not a Python script).
# Usage: scripts/pip_toolkit_test.sh [WORK_DIR]. Exit 0: passed; 77: cannot run here (says why).
set -uo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/gpujit-pip-toolkit}
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
  echo "skipped: hiding the system toolkit needs root and a mount namespace (unshare -m)"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
python3 -m venv "$work/venv" || exit 1
scripts/wheel.sh "$work/dist" >"$work/wheel.log" 2>&1 || { tail -20 "$work/wheel.log"; exit 1; }
wheel=$(ls "$work"/dist/gpujit-*.whl)
case "$wheel" in
  *manylinux_2_28_x86_64*) echo "wheel: $(basename "$wheel")" ;;
  *) echo "not a manylinux_2_28 wheel: $wheel"; exit 1 ;;
esac
grep -q 'consistent with the following platform tag' "$work/wheel.log" && grep -A1 'consistent with' "$work/wheel.log" | tail -1
"$work/venv/bin/pip" -q install "$work"/dist/gpujit-*.whl "nvidia-cuda-nvrtc>=13,<14" "nvidia-nvjitlink>=13,<14" "nvidia-cuda-cccl>=13,<14" \
  >"$work/install.log" 2>&1 || { tail -20 "$work/install.log"; exit 1; }
cat >"$work/check.py" <<'PY'
import os, subprocess, sys
import gpujit
src = '#include <cuda/std/cstdint>\nextern "C" __global__ void pip_k(cuda::std::uint32_t *x) { x[0] = 7; }'
cache = sys.argv[1]
a = gpujit.build(source=src, arch="sm_90", cache=cache)
b = gpujit.build(source=src, arch="sm_90", cache=cache)
exe = os.path.join(os.path.dirname(sys.executable), "gpujit")  # the environment's command
with open(exe, "rb") as f:
    assert f.read(4) == b"\x7fELF", "bin/gpujit is not a native program"
r = subprocess.run([exe, "--version"], capture_output=True, text=True)
v = (r.stdout + r.stderr).split()
print("kernels", a.kernels, "miss then hit", a.cache_hit, b.cache_hit, "NVRTC", v[v.index("NVRTC") + 1])
assert a.kernels == ["pip_k"] and not a.cache_hit and b.cache_hit
with open(os.path.join(cache, "k.cu"), "w") as f:
    f.write(src.replace("pip_k", "cli_k"))
runs = [subprocess.run([exe, "build", "--json", "--arch", "sm_90", "--cache-dir", cache, "-o", os.path.join(cache, "k.cubin"),
                        os.path.join(cache, "k.cu")], capture_output=True, text=True) for _ in range(2)]
import json
st = [json.loads(r.stdout)["modules"][0]["status"] if r.returncode == 0 else r.stderr for r in runs]
print("bin/gpujit build:", st[0], "then", st[1])
assert st == ["built", "hit"]
PY
hide='for d in /usr/local/cuda*; do [ -d "$d" ] && mount -t tmpfs none "$(readlink -f "$d")"; done; '
env -u CUDA_PATH -u CUDA_HOME unshare -m sh -c "$hide"'ls /usr/local/cuda/lib64 2>/dev/null | head -1; exec "$0" "$1" "$2"' \
  "$work/venv/bin/python" "$work/check.py" "$work/cache"
