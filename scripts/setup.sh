#!/usr/bin/env bash
# Install what gpujit needs (when missing and apt-get can), then configure and build it.
# Usage: scripts/setup.sh [BUILD_DIR]   (default: build)
#   GPUJIT_CMAKE_ARGS: more -D options; GPUJIT_BUILD_TARGETS: build only these targets
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v cc >/dev/null || need+=(gcc)
command -v c++ >/dev/null || need+=(g++)
[ -n "${GPUJIT_DEPS_PREFIX:-}" ] || command -v pkg-config >/dev/null || need+=(pkg-config)
command -v readelf >/dev/null && command -v nm >/dev/null || need+=(binutils)
command -v python3 >/dev/null || need+=(python3) # test_layers, bench/compare_builds.py
if [ -n "${GPUJIT_DEPS_PREFIX:-}" ]; then
  # Dependencies unpacked into a prefix (the GPU machine has no package registry).
  for h in cjson/cJSON.h xxhash.h cmocka.h archive.h hiredis/hiredis.h x86_64-linux-gnu/curl/curl.h; do
    [ -f "$GPUJIT_DEPS_PREFIX/include/$h" ] || { echo "setup: $h not under $GPUJIT_DEPS_PREFIX" >&2; exit 1; }
  done
  GPUJIT_CMAKE_ARGS="${GPUJIT_CMAKE_ARGS:-} -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DCMAKE_PREFIX_PATH=$GPUJIT_DEPS_PREFIX"
else
  for pc in libcjson:libcjson-dev libxxhash:libxxhash-dev cmocka:libcmocka-dev libarchive:libarchive-dev; do
    pkg-config --exists "${pc%%:*}" 2>/dev/null || need+=("${pc#*:}")
  done
  # headers only: libcurl and hiredis are loaded at run time
  [ -f /usr/include/x86_64-linux-gnu/curl/curl.h ] || [ -f /usr/include/curl/curl.h ] || need+=(libcurl4-openssl-dev)
  [ -f /usr/include/hiredis/hiredis.h ] || need+=(libhiredis-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: missing ${need[*]}; install them (apt-get install -y ${need[*]})" >&2
    exit 1
  fi
fi
cuda=${CUDA_PATH:-/usr/local/cuda}
[ -f "$cuda/include/nvrtc.h" ] || { echo "setup: no CUDA toolkit at $cuda (set CUDA_PATH)" >&2; exit 1; }

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUJIT_WERROR=ON \
  -DCUDAToolkit_ROOT="$cuda" ${GPUJIT_CMAKE_ARGS:-} >/dev/null
# GPUJIT_BUILD_TARGETS: only these targets (the fuzz build); else everything
targets=()
for t in ${GPUJIT_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
