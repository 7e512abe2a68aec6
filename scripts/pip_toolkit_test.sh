#!/usr/bin/env bash
# gpujit with CUDA from NVIDIA's pip wheels alone, the system toolkit hidden (/usr/local/cuda*
# covered in a private mount namespace, CUDA_PATH/CUDA_HOME unset), installed three ways, each into
# a fresh venv:
#   wheel   the manylinux_2_28 wheel of scripts/wheel.sh (built with the toolkit, as released) with
#           NVIDIA's nvidia-cuda-nvrtc, nvidia-nvjitlink and nvidia-cuda-cccl (CUDA 13) wheels;
#   source  `pip install '.[cu13]'` from this tree, built with the toolkit hidden: CMake takes CUDA's
#           headers from the build requirements' wheels (cmake/cuda.cmake), the extra brings NVRTC,
#           nvJitLink, CCCL, ptxas and CUPTI;
#   sdist   `python -m build --sdist`, then `pip install 'gpujit[cu13] @ file://…tar.gz'`, the same way.
# Each then builds a module with a CCCL header (miss, then a cache hit) from Python and from the
# environment's gpujit command (a native program, not a Python script), and reads the kernels and
# parameter tables of a kernel with several parameters (NVRTC 13.5's 4-aligned section table).
# Usage: scripts/pip_toolkit_test.sh [WORK_DIR]. Exit 0: passed; 77: cannot run here (says why).
#   GPUJIT_PIP_TEST=wheel,source,sdist   which installs to test (default: all three)
set -uo pipefail
cd "$(dirname "$0")/.."
src=$PWD
work=${1:-/tmp/gpujit-pip-toolkit}
only=${GPUJIT_PIP_TEST:-wheel,source,sdist}
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
  echo "skipped: hiding the system toolkit needs root and a mount namespace (unshare -m)"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1

# hidden CMD...: CMD with every /usr/local/cuda* covered by an empty tmpfs and CUDA_PATH/CUDA_HOME unset.
hidden() {
  env -u CUDA_PATH -u CUDA_HOME unshare -m sh -c \
    'for d in /usr/local/cuda*; do [ -d "$d" ] && mount -t tmpfs none "$(readlink -f "$d")"; done
     if [ -e /usr/local/cuda/include/nvrtc.h ] || nvcc --version >/dev/null 2>&1; then echo "the toolkit is not hidden"; exit 1; fi
     exec "$@"' sh "$@"
}

cat >"$work/check.py" <<'PY'
import json, os, subprocess, sys
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
print("  kernels", a.kernels, "miss then hit", a.cache_hit, b.cache_hit, "NVRTC", v[v.index("NVRTC") + 1])
assert a.kernels == ["pip_k"] and not a.cache_hit and b.cache_hit
assert "site-packages/nvidia/cu13" in r.stdout, "not NVIDIA's wheels:\n" + r.stdout
# NVRTC 13.5 writes the section table 4-aligned: kernels and parameter tables read all the same
k = gpujit.build(source='extern "C" __global__ void k(float *x, int n) { x[n] = 1; }\n'
                 'template <typename T> __global__ void s(T *x, T a, int n) {}', name_expressions=["s<double>"],
                 arch="sm_90", cache=False)
print("  kernels", sorted(k.kernels), "params", k.kernel("k").params, k.kernel("s<double>").params)
assert sorted(k.kernels) == ["_Z1sIdEvPT_S0_i", "k"]
assert k.kernel("k").params == [("unknown", 8), ("unknown", 4)]
assert k.kernel("s<double>").params == [("pointer", 8), ("float64", 8), ("int32", 4)]
with open(os.path.join(cache, "k.cu"), "w") as f:
    f.write(src.replace("pip_k", "cli_k"))
runs = [subprocess.run([exe, "build", "--json", "--arch", "sm_90", "--cache-dir", cache, "-o", os.path.join(cache, "k.cubin"),
                        os.path.join(cache, "k.cu")], capture_output=True, text=True) for _ in range(2)]
st = [json.loads(r.stdout)["modules"][0]["status"] if r.returncode == 0 else r.stderr for r in runs]
print("  bin/gpujit build:", st[0], "then", st[1])
assert st == ["built", "hit"]
PY

rc=0
# check NAME: check.py in $work/NAME's venv, the toolkit hidden.
check() {
  mkdir -p "$work/$1/cache"
  hidden "$work/$1/venv/bin/python" "$work/check.py" "$work/$1/cache" || { echo "$1: FAILED"; rc=1; return 1; }
  echo "$1: passed"
}
# built_against_wheels NAME LOG: the build log says CMake took CUDA's headers from the wheels.
built_against_wheels() {
  if grep -q "CUDA headers: NVIDIA's pip wheels" "$2"; then
    grep -o "CUDA headers: NVIDIA's pip wheels (CUDA_VERSION [0-9]*)" "$2" | head -1 | sed "s/^/$1: /"
  else
    echo "$1: the build did not take CUDA's headers from NVIDIA's wheels"; tail -30 "$2"; rc=1; return 1
  fi
}

case ",$only," in *,wheel,*)
  echo "== wheel: the manylinux_2_28 wheel with NVIDIA's NVRTC, nvJitLink and CCCL wheels"
  python3 -m venv "$work/wheel/venv" || exit 1
  if ! scripts/wheel.sh "$work/dist" >"$work/wheel.log" 2>&1; then
    tail -20 "$work/wheel.log"; rc=1
  else
    wheel=$(ls "$work"/dist/gpujit-*.whl)
    case "$wheel" in
      *manylinux_2_28_x86_64*) echo "wheel: $(basename "$wheel")" ;;
      *) echo "not a manylinux_2_28 wheel: $wheel"; rc=1 ;;
    esac
    grep -A1 'consistent with the following platform tag' "$work/wheel.log" | tail -1
    if "$work/wheel/venv/bin/pip" -q install "$wheel" "nvidia-cuda-nvrtc>=13,<14" "nvidia-nvjitlink>=13,<14" \
      "nvidia-cuda-cccl>=13,<14" >"$work/wheel/install.log" 2>&1; then
      check wheel
    else
      tail -20 "$work/wheel/install.log"; rc=1
    fi
  fi
;; esac

case ",$only," in *,source,*)
  echo "== source: pip install '.[cu13]' from the tree, the toolkit hidden"
  python3 -m venv "$work/source/venv" || exit 1
  # a build directory of its own: the tree's build-py/ may hold a configuration made with the toolkit
  if hidden "$work/source/venv/bin/pip" install -v "$src[cu13]" -C build-dir="$work/source/build" \
    >"$work/source/install.log" 2>&1; then
    built_against_wheels source "$work/source/install.log" && check source
  else
    tail -30 "$work/source/install.log"; echo "source: pip install failed"; rc=1
  fi
;; esac

case ",$only," in *,sdist,*)
  echo "== sdist: python -m build --sdist, then pip install 'gpujit[cu13] @ file://…', the toolkit hidden"
  python3 -m venv "$work/sdist/venv" || exit 1
  if ! { "$work/sdist/venv/bin/pip" -q install build && \
         "$work/sdist/venv/bin/python" -m build --sdist --outdir "$work/sdist/dist" "$src"; } >"$work/sdist/build.log" 2>&1; then
    tail -20 "$work/sdist/build.log"; echo "sdist: python -m build --sdist failed"; rc=1
  else
    sdist=$(ls "$work"/sdist/dist/gpujit-*.tar.gz)
    echo "sdist: $(basename "$sdist"), $(tar tzf "$sdist" | wc -l) files"
    # a source distribution holds the sources, not what was built or cached in the tree
    if tar tzf "$sdist" | grep -E '^[^/]+/(build[^/]*|cache/[^R]|dist|\.deps|\.whl)/' | head -3 | grep .; then
      echo "sdist: holds build outputs (above)"; rc=1
    fi
    # --no-cache-dir: pip keys the wheels it builds from an archive by its path alone, so a wheel from an
    # earlier run's sdist at the same path would be installed instead of building this one
    if hidden "$work/sdist/venv/bin/pip" install -v --no-cache-dir "gpujit[cu13] @ file://$sdist" >"$work/sdist/install.log" 2>&1; then
      built_against_wheels sdist "$work/sdist/install.log" && check sdist
    else
      tail -30 "$work/sdist/install.log"; echo "sdist: pip install failed"; rc=1
    fi
  fi
;; esac
exit $rc
