#!/usr/bin/env bash
# Kernel times from events, CUPTI (serialised and concurrent kinds) and Nsight Compute side by side,
# in one run, on kernels of 3, 15 and 200 µs of global-timer time launched back to back (bench/spin.cu).
# Usage: bench/timers_vs_ncu.sh GPUJIT OUTDIR [REPEAT]. Prints "RESULT <len> <timer> <median_ms>" lines
# and a table; ncu runs with --clock-control none, as gpujit's timers see the clocks.
set -uo pipefail
g=$1 out=$2 rep=${3:-200}
here=$(cd "$(dirname "$0")" && pwd)
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
for spec in short:3000 mid:15000 long:200000; do
  name=${spec%%:*} ns=${spec#*:}
  args=("$here/spin.cu" --kernel spin_ns --grid 132 --block 128 --arg "i64:$ns" --arg buf:i32:132 --warmup 5
        --repeat "$rep")
  for timer in events cupti cupti-concurrent; do
    "$g" run --json --timer "$timer" "${args[@]}" >"$out/spin_${name}_$timer.json" 2>&1
    ms=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernels"][0]["gpu_ms"]["median"])' \
      "$out/spin_${name}_$timer.json" 2>/dev/null || echo nan)
    echo "RESULT $name $timer $ms"
  done
  ncu --clock-control none --metrics gpu__time_duration.sum -k regex:spin_ns -c 100 --csv \
    "$g" run -q "${args[@]}" >"$out/spin_${name}_ncu.csv" 2>"$out/spin_${name}_ncu.err"
  ms=$(python3 - "$out/spin_${name}_ncu.csv" <<'PY'
import csv, io, statistics, sys
text = open(sys.argv[1]).read()
start = text.find('"ID"')
scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0}
d = [float(r["Metric Value"].replace(",", "")) * scale.get(r.get("Metric Unit", ""), 1.0)
     for r in csv.DictReader(io.StringIO(text[start:] if start >= 0 else "")) if r.get("Metric Name") == "gpu__time_duration.sum"]
print(statistics.median(d) if d else "nan")
PY
)
  echo "RESULT $name ncu $ms"
done
