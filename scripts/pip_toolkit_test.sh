#!/usr/bin/env bash
# gpujit with CUDA from NVIDIA's pip wheels alone: a fresh venv with nvidia-cuda-nvrtc, nvidia-nvjitlink and
# nvidia-cuda-cccl (CUDA 13) and gpujit's wheel, the system toolkit hidden (/usr/local/cuda*
# covered in a private mount namespace, CUDA_PATH/CUDA_HOME unset), builds a module with a CCCL
# header and hits the cache, from Python and from the wheel's gpujit command.
# Usage: scripts/pip_toolkit_test.sh [WORK_DIR]. Exit 0: passed; 77: cannot run here (says why).
set -uo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/gpujit-pip-toolkit}
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
  echo "skipped: hiding the system toolkit needs root and a mount namespace (unshare -m)"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
python3 -m venv "$work/venv" || exit 1
"$work/venv/bin/pip" -q wheel --no-deps -w "$work/dist" . >"$work/wheel.log" 2>&1 || { tail -20 "$work/wheel.log"; exit 1; }
"$work/venv/bin/pip" -q install "$work"/dist/gpujit-*.whl "nvidia-cuda-nvrtc>=13,<14" "nvidia-nvjitlink>=13,<14" "nvidia-cuda-cccl>=13,<14" \
  >"$work/install.log" 2>&1 || { tail -20 "$work/install.log"; exit 1; }
cat >"$work/check.py" <<'PY'
import os, subprocess, sys
import gpujit
src = '#include <cuda/std/cstdint>\nextern "C" __global__ void pip_k(cuda::std::uint32_t *x) { x[0] = 7; }'
cache = sys.argv[1]
a = gpujit.build(source=src, arch="sm_90", cache=cache)
b = gpujit.build(source=src, arch="sm_90", cache=cache)
exe = os.path.join(os.path.dirname(gpujit.__file__), "gpujit")
r = subprocess.run([exe, "--version"], capture_output=True, text=True)
v = (r.stdout + r.stderr).split()
print("kernels", a.kernels, "miss then hit", a.cache_hit, b.cache_hit, "NVRTC", v[v.index("NVRTC") + 1])
assert a.kernels == ["pip_k"] and not a.cache_hit and b.cache_hit
PY
hide='for d in /usr/local/cuda*; do [ -d "$d" ] && mount -t tmpfs none "$(readlink -f "$d")"; done; '
env -u CUDA_PATH -u CUDA_HOME unshare -m sh -c "$hide"'ls /usr/local/cuda/lib64 2>/dev/null | head -1; exec "$0" "$1" "$2"' \
  "$work/venv/bin/python" "$work/check.py" "$work/cache"
