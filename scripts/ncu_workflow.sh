#!/usr/bin/env bash
# The Nsight Compute workflow of docs/nsight-compute.md, run for real: find the expensive
# kernels, get a ready ncu command, profile one launch, read the per-line hot spots.
# Usage: scripts/ncu_workflow.sh GPUJIT OUTDIR (writes OUTDIR/workflow.txt).
set -uo pipefail
g=$(readlink -f "$1")
out=$(readlink -f "$2")
cd "$(dirname "$0")/.."
{
  echo '$ gpujit run --timeline examples/vecops.cu --launch examples/vecops.launch.json'
  "$g" run --timeline examples/vecops.cu --launch examples/vecops.launch.json
  args=(examples/block_reduce.cu --grid 4096 --block 256 --arg i32:1048576 --arg buf:f32:1048576:random
        --arg buf:f32:4096:zeros,out=checksum)
  echo
  echo '$ gpujit run examples/block_reduce.cu --grid 4096 --block 256 --arg i32:1048576 --arg buf:f32:1048576:random --arg buf:f32:4096:zeros,out=checksum'
  "$g" run "${args[@]}"
  echo
  echo '$ gpujit run --ncu-command examples/block_reduce.cu …'
  cmd=$("$g" run --ncu-command "${args[@]}")
  echo "$cmd"
  echo
  echo '$ ncu … (the command above)'
  eval "${cmd/ -o / -f -o $out/}" 2>&1 | grep -v "^==PROF==" | tail -5
  echo
  echo '$ ncu -i block_reduce-block_sum.ncu-rep --page source --csv --print-source cuda,sass > block_sum.csv'
  ncu -i "$out/block_reduce-block_sum.ncu-rep" --page source --csv --print-source cuda,sass >"$out/block_sum.csv"
  echo '$ gpujit ncu hotspots --top 8 block_sum.csv'
  "$g" ncu hotspots --top 8 "$out/block_sum.csv"
} >"$out/workflow.txt" 2>&1
tail -25 "$out/workflow.txt"
