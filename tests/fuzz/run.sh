#!/usr/bin/env bash
# Run every libFuzzer target for a bounded time, two at a time, and say what each did.
# Usage: tests/fuzz/run.sh FUZZ_BUILD_DIR [SECONDS_EACH] [TARGET...]
# The seed corpora are copied, so what a run discovers does not change the repository; a crash
# leaves its input in FUZZ_BUILD_DIR/fuzz-out/crashes/ and fails the run (exit 1).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh FUZZ_BUILD_DIR [SECONDS] [TARGET...]}" && pwd)
secs=${2:-60}
shift 2 2>/dev/null || shift $#
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(ls "$here/corpus")
out=$build/fuzz-out
rm -rf "$out" && mkdir -p "$out/crashes"
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$here/../lsan.supp

one() {
  local t=$1 exe=$build/tests/fuzz_$1
  mkdir -p "$out/corpus/$t"
  cp "$here/corpus/$t"/* "$out/corpus/$t/"
  # -timeout: an input that takes 20 s is a hang; -rss_limit_mb: a leak or a runaway allocation
  "$exe" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/crashes/$t-" "$out/corpus/$t" >"$out/$t.log" 2>&1
  echo $? >"$out/$t.rc"
}
export -f one
export build out here secs
printf '%s\n' "${targets[@]}" | xargs -P 2 -I{} bash -c 'one {}'

fail=0
printf '%-18s %12s %10s %8s %s\n' target executions exec/s corpus result
for t in "${targets[@]}"; do
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$t.log" | tail -1)
  corpus=$(ls "$out/corpus/$t" | wc -l)
  rc=$(cat "$out/$t.rc")
  if [ "$rc" = 0 ]; then result=ok; else result="CRASH (exit $rc): $(ls "$out/crashes" | grep "^$t-" | head -1)"; fail=1; fi
  printf '%-18s %12s %10s %8s %s\n' "$t" "${runs:-?}" "${speed:-?}" "$corpus" "$result"
done
[ $fail = 0 ] || { echo "fuzz: a target crashed; its log: $out/TARGET.log"; exit 1; }
