#!/usr/bin/env bash
# Nsight Compute source correlation, end to end on the GPU machine: for a single-file module, an
# LTO-linked two-file module, a template module and a module outside the current directory,
# profile one launch with --import-source yes (no --source-folders) and check that the report
# imported the user's CUDA source and that --page source shows the user's lines with metrics.
# Usage: scripts/ncu_check.sh GPUJIT OUTDIR. Prints "CHECK <case> ok|FAIL <why>" lines.
set -uo pipefail
g=$(readlink -f "$1")
out=$(readlink -f "$2")
repo=$(cd "$(dirname "$0")/.." && pwd)
ex="$repo/examples"
fails=0

check() { # name kernel-regex expected-source-text gpujit-run-args...
  local name=$1 regex=$2 want=$3
  shift 3
  local rep="$out/ncu_$name"
  ncu --set full --import-source yes -c 1 -k "regex:$regex" -f -o "$rep" "$g" run -q --warmup 0 --repeat 1 "$@" \
    >"$rep.log" 2>&1
  local rc=$?
  ncu -i "$rep.ncu-rep" --page source --csv --print-source cuda,sass >"$rep.source.csv" 2>"$rep.source.err"
  if [ $rc -ne 0 ]; then
    echo "CHECK $name FAIL: ncu exited $rc: $(tail -2 "$rep.log" | tr '\n' ' ')"; fails=$((fails+1)); return
  fi
  if grep -qi "failed to import\|could not import\|source file.*not found" "$rep.log" "$rep.source.err"; then
    echo "CHECK $name FAIL: $(grep -i "import\|not found" "$rep.log" "$rep.source.err" | head -2 | tr '\n' ' ')"
    fails=$((fails+1)); return
  fi
  if ! grep -qF -- "$want" "$rep.source.csv"; then
    echo "CHECK $name FAIL: '$want' not in --page source output ($(wc -l <"$rep.source.csv") lines)"
    fails=$((fails+1)); return
  fi
  echo "CHECK $name ok: imported, '$want' shown with metrics ($(wc -l <"$rep.source.csv") CSV lines)"
}

saxpy_args=(--grid 4096 --block 256 --arg i32:1048576 --arg f32:2 --arg buf:f32:1048576:random
            --arg buf:f32:1048576:zeros)
cd "$repo"
check single saxpy "y[i] = a * x[i] + y[i];" "$ex/saxpy.cu" "${saxpy_args[@]}"
check lto polynomial "return 1.0f + x * (2.0f + x * (3.0f + x * 4.0f));" \
  "$ex/lto/main.cu" "$ex/lto/helper.cu" --kernel polynomial --grid 4096 --block 256 \
  --arg i32:1048576 --arg buf:f32:1048576:random --arg buf:f32:1048576:zeros
# a lean CUB module (all 832 module-scope variables removed before ptxas). ncu's source page for
# block_sum lists CUB's files only — for the lean cubin and the --no-lean one alike (same six
# files, same 180 rows on the H100): a CUB line is what it can show
check lean_cub block_sum "return InternalBlockReduce(temp_storage).template Sum<true>(input, BLOCK_THREADS);" "$ex/block_reduce.cu" --grid 4096 --block 256 \
  --arg i32:1048576 --arg buf:f32:1048576:random --arg buf:f32:4096:zeros
check template scale "data[i] *= factor;" "$ex/scale.cu" --name-expr 'scale<float>' --kernel 'scale<float>' \
  --grid 4096 --block 256 --arg i32:1048576 --arg f32:3 --arg buf:f32:1048576:random
elsewhere=$(mktemp -d /tmp/gpujit-elsewhere-XXXXXX)
mkdir -p "$elsewhere/src" "$elsewhere/run"
cp "$ex/saxpy.cu" "$elsewhere/src/far_saxpy.cu"
cd "$elsewhere/run"
check outside saxpy "y[i] = a * x[i] + y[i];" ../src/far_saxpy.cu "${saxpy_args[@]}"
cd "$repo"
# A cache entry built in one checkout, served to a checkout at a path of another length: the
# cubin's line table is rebuilt for the new path; the driver loads it and ncu imports the new file.
a=$(mktemp -d /tmp/gpujit-ckA-XXXXXX); b="$a-moved-elsewhere"; rc_cache=$(mktemp -d /tmp/gpujit-rc-XXXXXX)
mkdir -p "$a/k" && cp "$ex/saxpy.cu" "$a/k/saxpy.cu"
"$g" build -q --cache-dir "$rc_cache" --base-dir "$a" -o "$a/k.cubin" "$a/k/saxpy.cu"
cp -a "$a" "$b"
if "$g" run --cache-dir "$rc_cache" --base-dir "$b" "$b/k/saxpy.cu" "${saxpy_args[@]}" | grep -q "cache hit"; then
  cd "$b"
  check relocated saxpy "y[i] = a * x[i] + y[i];" --cache-dir "$rc_cache" --base-dir "$b" "$b/k/saxpy.cu" "${saxpy_args[@]}"
  cd "$repo"
  if grep -qF "\"File Path\",\"$b/k/saxpy.cu\"" "$out/ncu_relocated.source.csv"; then
    echo "CHECK relocated-path ok: the report names $b/k/saxpy.cu"
  else
    echo "CHECK relocated-path FAIL: $(grep -m1 'File Path' "$out/ncu_relocated.source.csv")"; fails=$((fails+1))
  fi
else
  echo "CHECK relocated FAIL: the moved checkout did not hit the cache"; fails=$((fails+1))
fi
# A report read directly (gpujit runs ncu's export) gives the table its CSV export gives.
if [ -f "$out/ncu_single.ncu-rep" ]; then
  a=$("$g" ncu hotspots --top 8 "$out/ncu_single.ncu-rep" 2>&1)
  b=$("$g" ncu hotspots --top 8 "$out/ncu_single.source.csv" 2>&1)
  if [ "$a" = "$b" ] && echo "$a" | grep -q "by CUDA source line"; then
    echo "CHECK report ok: .ncu-rep read directly, the table of its CSV export (top: $(echo "$a" | sed -n 3p | awk '{print $1 " at " $3}'))"
  else
    echo "CHECK report FAIL: $(echo "$a" | head -2 | tr '\n' ' ')"; fails=$((fails+1))
  fi
  c=$(ncu -i "$out/ncu_single.ncu-rep" --page source --csv 2>/dev/null | "$g" ncu hotspots --top 1 - 2>&1)
  if echo "$c" | grep -q "by SASS instruction"; then
    echo "CHECK default-export ok: ncu's default export gives a table by instruction ($(echo "$c" | sed -n 3p | awk '{print $1 " at " $3}'))"
  else
    echo "CHECK default-export FAIL: $(echo "$c" | head -2 | tr '\n' ' ')"; fails=$((fails+1))
  fi
fi
echo "ncu check: $fails failed"
[ $fails -eq 0 ]
