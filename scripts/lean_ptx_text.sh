#!/usr/bin/env bash
# Does Nsight Compute's CUDA source view need the PTX text that -lineinfo embeds in a cubin
# (.nv_debug_ptx_txt)? Profiles block_sum from the lean cubin as built and from a copy without
# that section, and counts the CUDA-source and PTX rows each report shows.
# Usage: scripts/lean_ptx_text.sh GPUJIT BENCH_LEAN OUTDIR. Prints "PTXTEXT ..." lines.
set -uo pipefail
g=$(readlink -f "$1"); bl=$(readlink -f "$2"); out=$(readlink -f "$3")
repo=$(cd "$(dirname "$0")/.." && pwd)
"$g" build -q --no-cache -o "$out/lean_br.cubin" "$repo/examples/block_reduce.cu" || exit 1
# GNU objcopy (2.40, 2.42) refuses sm_90 cubins ("Unable to recognise the format of the input
# file"), so the section is hidden instead: its name in the section-name table becomes
# .nv_debug_ptx_tx_ (same length, nothing moves), which no reader of the PTX text looks for.
python3 - "$out/lean_br.cubin" "$out/lean_br_noptx.cubin" <<'PY' || { echo "PTXTEXT skipped: the section could not be hidden"; exit 0; }
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
assert b[:4] == b"\x7fELF" and b[4] == 2, "not an ELF64 file"
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
stroff, = struct.unpack_from("<Q", b, shoff + shstrndx * shentsize + 0x18)
hidden = 0
for i in range(shnum):
    name, = struct.unpack_from("<I", b, shoff + i * shentsize)
    at = stroff + name
    if b[at:at + 18] == b".nv_debug_ptx_txt\x00":
        b[at + 16] = ord("_")
        hidden += 1
assert hidden == 1, "sections named .nv_debug_ptx_txt: %d" % hidden
open(sys.argv[2], "wb").write(b)
PY
for v in lean_br lean_br_noptx; do
  bytes=$(stat -c %s "$out/$v.cubin")
  has=$(readelf -S "$out/$v.cubin" 2>/dev/null | grep -c nv_debug_ptx_txt)
  ncu --set full --import-source yes -c 1 -k block_sum -f -o "$out/ptxtext_$v" "$bl" launch "$out/$v.cubin" \
    >"$out/ptxtext_$v.log" 2>&1 || { echo "PTXTEXT $v FAIL: ncu: $(tail -1 "$out/ptxtext_$v.log")"; continue; }
  ncu -i "$out/ptxtext_$v.ncu-rep" --page source --csv --print-source cuda,sass >"$out/ptxtext_$v.cuda.csv" 2>/dev/null
  files=$(grep -c '"File Path"' "$out/ptxtext_$v.cuda.csv")
  rows=$(grep -c '' "$out/ptxtext_$v.cuda.csv")
  ptx=$(ncu -i "$out/ptxtext_$v.ncu-rep" --page source --csv --print-source ptx 2>/dev/null | grep -cE "ld\.global|bar\.sync|shfl")
  echo "PTXTEXT $v: $bytes bytes, .nv_debug_ptx_txt sections $has, CUDA source view: $files files, $rows rows; PTX instruction rows $ptx"
done
