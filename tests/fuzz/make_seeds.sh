#!/usr/bin/env bash
# (Re)make the seed corpora of tests/fuzz/corpus from tests/data and real builds of examples/.
# Usage: tests/fuzz/make_seeds.sh BUILD_DIR   (a configured, built tree: gpujit, fuzz_make_seeds)
# Crash inputs found by fuzzing are added by hand (tests/fuzz/README.md) and never removed here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: make_seeds.sh BUILD_DIR}" && pwd)
G=$build/gpujit
C=$here/corpus
data=$root/tests/data
ex=$root/examples
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed() { mkdir -p "$C/$1"; cp "$2" "$C/$1/${3:-$(basename "$2")}"; }
text() { mkdir -p "$C/$1"; printf '%s' "$3" > "$C/$1/$2"; }

cd "$work"
export GPUJIT_CACHE_DIR=$work/cache
# real builds: a traced miss (its entry keeps a profile), a traced hit, PTX, a project
cp "$ex/saxpy.cu" "$ex/scale.cu" .
$G build -q --arch sm_90 --time-trace=miss.json -o saxpy.cubin saxpy.cu
$G build -q --arch sm_90 --time-trace=hit.json -o saxpy.cubin saxpy.cu
$G build -q --arch compute_90 --no-cache -o saxpy.ptx saxpy.cu
$G build -q --arch sm_90 --no-cache --name-expr 'scale<float>' -o scale.cubin scale.cu
mkdir proj && cp saxpy.cu scale.cu proj/
$G build -q --arch sm_90 -j 2 --no-cache --time-trace=project.json --out-dir pout proj
$G build -q --arch sm_90 --no-cache -Xnvrtc --fdevice-time-trace=nvrtc-raw saxpy.cu -o raw.cubin
entry=$(ls -d cache/entries/*/*)
printf '#include <cuda_fp16.h>\n__global__ void h(__half *x) { x[0] = __float2half(1.0f); }\n' > half.cu
$G build -q --arch sm_90 -o half.cubin half.cu   # a toolkit header: a dependency group

for f in "$data"/*.json; do seed trace "$f"; done
seed trace miss.json gpujit_miss.json
seed trace hit.json gpujit_recorded_hit.json
seed trace project.json gpujit_project.json
seed trace nvrtc-raw.json nvrtc_raw_saxpy.json
for f in "$data"/nvrtc_*.json "$data"/empty.json "$data"/malformed.json; do seed nvrtc_trace "$f"; done
seed nvrtc_trace nvrtc-raw.json nvrtc_raw_saxpy.json
for f in "$data"/gpujit_small.json "$data"/nvrtc_array.json "$data"/bad_event.json; do seed trace_load "$f"; done
seed trace_load hit.json gpujit_recorded_hit.json
for f in "$data"/*.csv; do seed ncu_csv "$f"; done
text ncu_csv header_only.csv '"# Address","Source","Warp Stall Sampling (All Samples)"'

text arg_spec i32 'i32:1048576'
text arg_spec f32 'f32:2.0'
text arg_spec f64_neg 'f64:-1e-300'
text arg_spec buf_random 'buf:f32:1048576:random:7,name=x,out=checksum'
text arg_spec buf_value 'buf:i32:16:value:3,out=dump.bin'
text arg_spec buf_iota 'buf:u64:8:iota'
text arg_spec ref '@x'
text arg_spec u32_hex 'u32:0xffffffff'
seed launch_plan "$ex/vecops.launch.json"
text launch_plan array.json '[{"kernel":"saxpy","grid":[4],"block":[256,1,1],"shared":0,"args":["i32:1024","f32:2","buf:f32:1024:random:1,name=x","buf:f32:1024:ones"]}]'
text launch_plan refs.json '{"launches":[{"kernel":"a","grid":1,"block":32,"args":["buf:f32:32,name=b"]},{"kernel":"b","grid":[1,1,1],"block":[32],"args":["@b"]}]}'

seed image saxpy.cubin
seed image scale.cubin
seed image saxpy.ptx
seed image "$entry/image.cubin" relocated_entry.cubin
seed cache_entry "$entry/meta.json"
seed cache_entry "$entry/profile.json"
# the entry's image is the one the cache_entry target stores beside each input
cp "$entry/image.cubin" "$C/image/saxpy.cubin"
seed cache_records "$entry/meta.json"
seed cache_records "$(ls cache/manifests/*/* | head -1)" manifest.json
for g in cache/deps/*/*; do seed cache_records "$g" "group_$(basename "$g" | cut -c1-8).bin"; done
text cache_records group_v1.json '{"schema":"gpujit-deps-1","deps":[{"path":"/usr/local/cuda/include/cuda_fp16.h","size":1,"ino":2,"mtime":3,"ctime":4,"xxh3":"0123456789abcdef"}]}'

mkdir -p "$C/wire" "$C/bundle"
fresh=$work/fresh
"$build/tests/fuzz_make_seeds" "$fresh" saxpy.cu "$work"
seed wire "$work/wire_frames.bin"
seed bundle "$work/saxpy.bundle"
GPUJIT_CACHE_DIR=$fresh $G cache export "$work/saxpy.tar" >/dev/null
GPUJIT_CACHE_DIR=$fresh $G cache export "$work/saxpy.tar.gz" >/dev/null
seed import "$work/saxpy.tar"
seed import "$work/saxpy.tar.gz"

for f in "$ex"/*.cu "$ex"/lto/*.cu; do seed includes "$f"; done
text includes computed.cu $'#define HDR <cuda_fp16.h>\n#include HDR\n#include HEADER\n#if __has_include(<cuda_bf16.h>)\n#include <cuda_bf16.h>\n#endif\n__global__ void k() {}\n'
text includes next.cu $'#include_next <cuda_fp16.h>\n#include "missing.h" // comment\n/* #include "commented.h" */\n#include \\\n  <cuda/std/cstdint>\n'
seed project_manifest "$ex/modules.json"
text project_manifest two.json '{"modules":[{"name":"a","files":["a.cu"],"output":"out/a.cubin","options":{"arch":"sm_90","defines":["N=4"],"include_dirs":["."],"std":"c++17","fast_math":true,"lineinfo":false,"maxrregcount":64,"name_expressions":["a"],"nvrtc_options":["-dopt=on"]}},{"name":"b","files":["a.cu","b.cu"]}]}'
echo "seeds: $(find "$C" -type f | wc -l) files in $(ls "$C" | wc -l) corpora"
