#!/usr/bin/env bash
# On the GPU machine: install the framework wheels the machine lacks (it has no package registry)
# from what the caller carried, into /tmp/gpujit-fw, for the profile's Warp and gstaichi checks.
#   .deps/wheels/*.whl             gstaichi and its dependencies (pip download --python-version 3.12
#                                  --only-binary=:all: gstaichi; numpy left out: the machine has one)
#   warp: warp-py.tar.xz           the warp package without its two libraries (.deps/wheels or /tmp/gpujit-carry)
#         warp.so.xz.part-aa/-ab   warp/bin/warp.so, xz -9e, split in two (over 64 MiB together): the
#                                  first part carried by an earlier call and left in /tmp/gpujit-carry
# Prints the directory to put on PYTHONPATH. Usage: scripts/gpu_frameworks.sh
set -uo pipefail
cd "$(dirname "$0")/.."
site=/tmp/gpujit-fw
carry=/tmp/gpujit-carry
mkdir -p "$site" "$carry"
cp -n .deps/wheels/* "$carry"/ 2>/dev/null
ls "$carry"/*.whl >/dev/null 2>&1 &&
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$carry"/*.whl >&2
if [ -f "$carry/warp-py.tar.xz" ] && [ -f "$carry/warp.so.xz.part-aa" ] && [ -f "$carry/warp.so.xz.part-ab" ] &&
   [ ! -s "$site/warp/bin/warp.so" ]; then
  tar xJf "$carry/warp-py.tar.xz" -C "$site" &&
    cat "$carry/warp.so.xz.part-aa" "$carry/warp.so.xz.part-ab" | xz -d > "$site/warp/bin/warp.so"
fi
echo "$site"
