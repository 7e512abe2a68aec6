#!/usr/bin/env bash
# The main job: build every example module with a compile-time trace into the in-tree cache,
# analyze the traces, then run the kernels and report compile against execute cost (where a
# GPU is present; elsewhere one line says so and the compile half is shown).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build >/dev/null
g="build/gpujit"
out=build/examples
mkdir -p "$out"
export GPUJIT_CACHE_DIR="$PWD/cache" GPUJIT_BASE_DIR="$PWD"  # the in-tree cache, keys relative to the checkout
echo "== build (NVRTC, traced, through the cache)"
$g build --time-trace -o "$out/saxpy.cubin" examples/saxpy.cu
$g build --time-trace -o "$out/vecops.cubin" examples/vecops.cu
$g build --time-trace -o "$out/scale.cubin" --name-expr 'scale<float>' --name-expr 'scale<double>' examples/scale.cu
$g build --time-trace -o "$out/lto.cubin" examples/lto/main.cu examples/lto/helper.cu
$g build --time-trace -o "$out/block_reduce.cubin" examples/block_reduce.cu
echo "== the same modules as one project (examples/modules.json): hits served at once, no worker"
$g build --modules examples/modules.json --out-dir "$out/project" --time-trace="$out/project/project.trace.json"
echo "== where the compile time went"
$g trace analyze --top 5 "$out"/*.trace.json
echo "== run: compile against execute"
set +e
$g run --time-trace="$out/saxpy.run.trace.json" examples/saxpy.cu --grid 4096 --block 256 --arg i32:1048576 \
  --arg f32:2.0 --arg buf:f32:1048576:random --arg buf:f32:1048576:zeros,out=checksum
rc=$?
set -e
if [ $rc -eq 6 ]; then
  echo "(no GPU on this machine: the compile half above is all there is to show)"
elif [ $rc -ne 0 ]; then
  exit $rc
else
  $g run examples/vecops.cu --launch examples/vecops.launch.json
  $g run --name-expr 'scale<float>' --kernel 'scale<float>' examples/scale.cu --grid 4096 --block 256 \
    --arg i32:1048576 --arg f32:0.5 --arg buf:f32:1048576:random,out=checksum
  $g run --kernel polynomial examples/lto/main.cu examples/lto/helper.cu --grid 4096 --block 256 \
    --arg i32:1048576 --arg buf:f32:1048576:random --arg buf:f32:1048576:zeros,out=checksum
  $g run examples/block_reduce.cu --grid 4096 --block 256 --arg i32:1048576 --arg buf:f32:1048576:ones \
    --arg buf:f32:4096:zeros,out=checksum
  echo "trace of compile then execute: $out/saxpy.run.trace.json (open in ui.perfetto.dev)"
fi
echo "== cache"
$g cache stats
# The commands above are this build's; to type `gpujit` yourself:
echo "== the gpujit command of this build: $PWD/$g (export PATH=\"$PWD/build:\$PATH\"), or pip install '.[cu13]' into a venv (README: Quick start)"
