#!/usr/bin/env bash
# Golden CLI cases: each cases/*.sh prints what the CLI did; its first lines say
#   # exit: N          the expected exit code
#   # expect: GLOB     a glob that the combined output must match (repeatable)
#   # reject: GLOB     a glob it must not match (repeatable)
# Scripts run in a fresh temporary directory with $GPUJIT and $EXAMPLES set. A case that cannot
# run here exits 77 after printing "skip: REASON": it is reported as skipped, with the reason.
set -u
export GPUJIT=$1 EXAMPLES=$3 NO_COLOR=1
cases=$2/cases
pass=0; fail=0; skipped=0
for c in "$cases"/*.sh; do
  name=$(basename "$c" .sh)
  dir=$(mktemp -d)
  out=$(cd "$dir" && GPUJIT_CACHE_DIR="$dir/.gpujit-cache" XDG_STATE_HOME="$dir/.state" bash "$c" 2>&1); rc=$?
  want=$(sed -n 's/^# exit: //p' "$c")
  if [ "$rc" = 77 ] && [[ "$out" == *"skip: "* ]]; then
    skipped=$((skipped+1)); echo "skip $name: ${out##*skip: }"; rm -rf "$dir"; continue
  fi
  ok=1; why=""
  [ "$rc" = "$want" ] || { ok=0; why="exit $rc, want $want"; }
  while IFS= read -r g; do
    # shellcheck disable=SC2053
    [[ "$out" == $g ]] || { ok=0; why="$why; output lacks $g"; }
  done < <(sed -n 's/^# expect: //p' "$c")
  while IFS= read -r g; do
    # shellcheck disable=SC2053
    [[ "$out" == $g ]] && { ok=0; why="$why; output has $g"; }
  done < <(sed -n 's/^# reject: //p' "$c")
  if [ $ok = 1 ]; then pass=$((pass+1)); echo "ok   $name"
  else fail=$((fail+1)); echo "FAIL $name: $why"; echo "$out" | sed 's/^/     | /'; fi
  rm -rf "$dir"
done
echo "$pass passed, $fail failed, $skipped skipped"
[ $fail -eq 0 ]
