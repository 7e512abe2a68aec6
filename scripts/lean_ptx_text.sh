#!/usr/bin/env bash
# Does Nsight Compute's CUDA source view need the PTX text that -lineinfo embeds in a cubin
# (.nv_debug_ptx_txt)? Profiles block_sum from the lean cubin as built and from a copy without
# that section, and counts the CUDA-source and PTX rows each report shows.
# Usage: scripts/lean_ptx_text.sh GPUJIT BENCH_LEAN OUTDIR. Prints "PTXTEXT ..." lines.
set -uo pipefail
g=$(readlink -f "$1"); bl=$(readlink -f "$2"); out=$(readlink -f "$3")
repo=$(cd "$(dirname "$0")/.." && pwd)
"$g" build -q --no-cache -o "$out/lean_br.cubin" "$repo/examples/block_reduce.cu" || exit 1
# $OBJCOPY: one that can rewrite a cubin (GNU objcopy 2.40 and 2.42 both refuse sm_90 cubins:
# "Unable to recognise the format of the input file")
if ! "${OBJCOPY:-objcopy}" --remove-section .nv_debug_ptx_txt "$out/lean_br.cubin" "$out/lean_br_noptx.cubin" 2>"$out/objcopy.err"; then
  echo "PTXTEXT skipped: objcopy cannot rewrite the cubin: $(head -1 "$out/objcopy.err")"; exit 0
fi
for v in lean_br lean_br_noptx; do
  bytes=$(stat -c %s "$out/$v.cubin")
  has=$(readelf -S "$out/$v.cubin" 2>/dev/null | grep -c nv_debug_ptx_txt)
  ncu --set full --import-source yes -c 1 -k block_sum -f -o "$out/ptxtext_$v" "$bl" launch "$out/$v.cubin" \
    >"$out/ptxtext_$v.log" 2>&1 || { echo "PTXTEXT $v FAIL: ncu: $(tail -1 "$out/ptxtext_$v.log")"; continue; }
  cuda=$(ncu -i "$out/ptxtext_$v.ncu-rep" --page source --csv --print-source cuda 2>/dev/null | grep -c "Reduce(storage)")
  ptx=$(ncu -i "$out/ptxtext_$v.ncu-rep" --page source --csv --print-source ptx 2>/dev/null | grep -cE "ld\.global|bar\.sync|shfl")
  echo "PTXTEXT $v: $bytes bytes, .nv_debug_ptx_txt sections $has, CUDA rows naming Reduce(storage) $cuda, PTX instruction rows $ptx"
done
