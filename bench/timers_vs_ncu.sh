#!/usr/bin/env bash
# Kernel times from events, CUPTI (serialised and concurrent kinds) and Nsight Compute side by side,
# in one run, for two kinds of kernel (bench/spin.cu), each at three lengths, launched back to back:
#   fma   fma_loop, 528 x 256 threads of dependent FMAs: bound by the SM clock, as real kernels are
#         (the kind to judge the timers by);
#   spin  spin_ns, 132 x 128 threads waiting on %globaltimer: a fixed wall time, whatever the
#         clock — which is how it differs under a profiler (ncu's replays) and back to back.
# Usage: bench/timers_vs_ncu.sh GPUJIT OUTDIR [REPEAT]. Prints "RESULT <kind>_<len> <timer> <median_ms>"
# lines and a table of each timer against ncu; ncu runs with --clock-control none, as gpujit's
# timers see the clocks.
set -uo pipefail
g=$1 out=$2 rep=${3:-200}
here=$(cd "$(dirname "$0")" && pwd)
declare -A res
for spec in fma_short:fma_loop:80 fma_mid:fma_loop:1330 fma_long:fma_loop:25200 \
            spin_short:spin_ns:3000 spin_mid:spin_ns:15000 spin_long:spin_ns:200000; do
  IFS=: read -r name kernel n <<<"$spec"
  if [ "$kernel" = fma_loop ]; then
    args=("$here/spin.cu" --kernel fma_loop --grid 528 --block 256 --arg "i32:$n" --arg buf:f32:135168)
  else
    args=("$here/spin.cu" --kernel spin_ns --grid 132 --block 128 --arg "i64:$n" --arg buf:i32:132)
  fi
  args+=(--warmup 5 --repeat "$rep")
  for timer in events cupti cupti-concurrent; do
    "$g" run --json --timer "$timer" "${args[@]}" >"$out/timers_${name}_$timer.json" 2>&1
    ms=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernels"][0]["gpu_ms"]["median"])' \
      "$out/timers_${name}_$timer.json" 2>/dev/null || echo nan)
    res[$name,$timer]=$ms
    echo "RESULT $name $timer $ms"
  done
  ncu --clock-control none --metrics gpu__time_duration.sum -k "regex:^$kernel\$" -c 100 --csv \
    "$g" run -q "${args[@]}" >"$out/timers_${name}_ncu.csv" 2>"$out/timers_${name}_ncu.err"
  ms=$(python3 - "$out/timers_${name}_ncu.csv" <<'PY'
import csv, io, statistics, sys
text = open(sys.argv[1]).read()
start = text.find('"ID"')
scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0}
d = [float(r["Metric Value"].replace(",", "")) * scale.get(r.get("Metric Unit", ""), 1.0)
     for r in csv.DictReader(io.StringIO(text[start:] if start >= 0 else "")) if r.get("Metric Name") == "gpu__time_duration.sum"]
print(statistics.median(d) if d else "nan")
PY
)
  res[$name,ncu]=$ms
  echo "RESULT $name ncu $ms"
done
printf '\n%-12s %10s %10s %10s %17s\n' kernel "ncu µs" events cupti cupti-concurrent
for name in fma_short fma_mid fma_long spin_short spin_mid spin_long; do
  python3 - "$name" "${res[$name,ncu]}" "${res[$name,events]}" "${res[$name,cupti]}" "${res[$name,cupti-concurrent]}" <<'PY'
import sys
name, ref, *t = sys.argv[1:]
def f(x):
    try:
        return float(x)
    except ValueError:
        return float("nan")
ref = f(ref)
cells = ["%+.1f %%" % (100 * (f(x) - ref) / ref) if ref == ref and f(x) == f(x) else "?" for x in t]
print("%-12s %10.2f %10s %10s %17s" % (name, ref * 1e3, *cells))
PY
done
