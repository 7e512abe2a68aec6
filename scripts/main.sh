#!/usr/bin/env bash
# The main job: build every example module with a compile-time trace, then analyze the traces.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build >/dev/null
g="build/gpujit"
out=build/examples
export GPUJIT_CACHE_DIR="$PWD/cache" GPUJIT_BASE_DIR="$PWD"  # the in-tree cache, keys relative to the checkout
mkdir -p "$out"

set -x
$g build --time-trace -o "$out/saxpy.cubin" examples/saxpy.cu
$g build --time-trace -o "$out/vecops.cubin" examples/vecops.cu
$g build --time-trace -o "$out/scale.cubin" --name-expr 'scale<float>' --name-expr 'scale<double>' examples/scale.cu
$g build --time-trace -o "$out/lto.cubin" examples/lto/main.cu examples/lto/helper.cu
$g build --time-trace -o "$out/block_reduce.cubin" examples/block_reduce.cu
$g trace analyze --top 5 "$out"/*.trace.json
$g cache stats
