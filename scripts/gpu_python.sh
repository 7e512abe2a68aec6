#!/usr/bin/env bash
# On the GPU machine (scripts/gpu.sh runs it; alone it needs the same LD_LIBRARY_PATH): the Python
# package from a wheel — a carried one in .whl/, else built here from this tree (the machine has no
# package registry: scikit-build-core and CMake are installed there, the .deb dependencies carried)
# — installed into /tmp/gpujit-site, its tests (GPU ones included) and the launch benchmark.
# Usage: scripts/gpu_python.sh OUT_DIR [DEPS_PREFIX] [--install-only]   (--install-only: no tests,
# no benchmark; scripts/gpu.sh's part inproc)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/gpujit-out}
prefix=${2:-/tmp/gpujit-deps}
site=/tmp/gpujit-site
mkdir -p "$out"
wheel=$(ls .whl/gpujit-*.whl 2>/dev/null | head -1)
if [ -z "$wheel" ]; then
  rm -rf /tmp/gpujit-wheel
  python3 -m pip wheel -q --no-build-isolation --no-deps -w /tmp/gpujit-wheel \
    -C cmake.define.CMAKE_PREFIX_PATH="$prefix/usr" -C cmake.define.CMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON \
    -C build-dir=/tmp/gpujit-wheel-build . >"$out/wheel.log" 2>&1 || { tail -20 "$out/wheel.log"; exit 1; }
  wheel=$(ls /tmp/gpujit-wheel/gpujit-*.whl)
fi
echo "wheel: $wheel"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "$wheel" || exit 1
[ "${3:-}" = --install-only ] && exit 0
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
# the docs' C examples link against the GPU build (tests/python/test_docs.py)
export GPUJIT_BUILD_DIR=${GPUJIT_BUILD_DIR:-$PWD/build-gpu}
(cd tests/python && timeout 400 python3 -m pytest -v -s -p no:cacheprovider . 2>&1) | tee "$out/python_tests.txt" |
  grep -E "PASSED|FAILED|SKIPPED|ERROR|GPU median|passed|failed"
timeout 200 python3 bench/python_launch.py 20000 7 2>&1 | tee "$out/python_launch.txt"
