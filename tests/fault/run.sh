#!/usr/bin/env bash
# Fault injection through the CLI: every write to a regular file from the Nth on fails (a full
# disk), for each N until a build no longer writes that much; and a compile killed with -9 in
# the middle. After each: the build either succeeds with a correct output, or fails with exit 4
# and a clear message and leaves no output file; the cache verifies clean; the next build works.
set -u
gpujit=$1 shim=$2 examples=$3
# Under AddressSanitizer the shim is preloaded ahead of its runtime: allow that.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
"$gpujit" build -q --arch sm_90 --no-cache -o good.cubin "$examples/vecops.cu" || { echo "reference build failed"; exit 1; }
for n in 1 2 3 4 5 6 7 8 9 10 11 12; do
  rm -rf c out.cubin
  out=$(GPUJIT_FAIL_WRITE_AT=$n LD_PRELOAD="$shim" "$gpujit" build --arch sm_90 --cache-dir c -o out.cubin \
        "$examples/vecops.cu" 2>&1); rc=$?
  if [ $rc = 0 ]; then
    cmp -s out.cubin good.cubin && ok || bad "N=$n: exit 0 but the output differs"
    [[ "$out" == *"cache store failed"* || -d c/entries ]] && ok || bad "N=$n: no store and no warning"
  elif [ $rc = 4 ]; then
    [ ! -e out.cubin ] && ok || bad "N=$n: exit 4 left out.cubin behind"
    [[ "$out" == *"gpujit: error: "*"out.cubin"* ]] && ok || bad "N=$n: unclear error: $out"
  else
    bad "N=$n: exit $rc: $out"
  fi
  ls out.cubin.tmp.* >/dev/null 2>&1 && bad "N=$n: temp output left" || ok
  v=$("$gpujit" cache --cache-dir c verify 2>&1) && ok || bad "N=$n: cache verify: $v"
  "$gpujit" build -q --arch sm_90 --cache-dir c -o again.cubin "$examples/vecops.cu" && cmp -s again.cubin good.cubin \
    && ok || bad "N=$n: the next build failed or differs"
done
# kill -9 while compiling a slow module: no entry, no lock held, the next build succeeds.
rm -rf c
"$gpujit" build -q --arch sm_90 --cache-dir c -o slow.cubin "$examples/block_reduce.cu" &
pid=$!
sleep 0.4
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
[ ! -e slow.cubin ] && ok || bad "killed build left slow.cubin"
v=$("$gpujit" cache --cache-dir c verify 2>&1) && ok || bad "after kill -9: verify: $v"
timeout 120 "$gpujit" build -q --arch sm_90 --cache-dir c -o slow.cubin "$examples/block_reduce.cu" && ok \
  || bad "after kill -9 the next build failed (a stale lock?)"
"$gpujit" build --arch sm_90 --cache-dir c -o slow.cubin "$examples/block_reduce.cu" | grep -q " hit " && ok \
  || bad "after kill -9 the rebuilt entry does not hit"
# gpujit profile, the profiled program's disk full from its third write on: the report is still
# made, with the command's status, and says the process's records were lost (and why).
target=$(dirname "$shim")/profile_target_dl
if [ -x "$target" ]; then
  out=$(PROFILE_TARGET_NVRTC="${CUDA_PATH:-/usr/local/cuda}/lib64/libnvrtc.so.13" GPUJIT_FAIL_WRITE_AT=3 \
        LD_PRELOAD="$shim" "$gpujit" profile -- "$target" compile a compile b compile c 2>&1)
  [[ "$out" == *"could not write its records (No space left on device)"* ]] && ok \
    || bad "profile: records lost to a full disk not reported: $out"
  [[ "$out" == *"exit 0, wall"* ]] && ok || bad "profile: no report, or the command's status lost: $out"
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
