# exit: 0
# expect: *plain: 2:warmup:0 3:active:0 4:active:0 5:after:0 7:warmup:1 8:active:1 9:active:1 10:after:1 |*
# expect: *skip_first: 3:warmup:0 4:active:0 5:after:0 |*
# expect: *skip_first_wait: 2:warmup:0 3:active:0 4:after:0 7:warmup:1 8:active:1 9:after:1 |*
# expect: *repeat 0: 1:active:0 2:after:0 3:active:1 4:after:1 5:active:2 6:after:2 7:active:3 8:after:3 |*
# expect: *step 0 recorded: 0:active:0 1:after:0 |*
# expect: *no schedule: 1:active:0 2:active:0 3:active:0 |*
# expect: *torch under api:  |*
# expect: *auto takes the first: 1:active:0 2:after:0 | api*
# expect: *note: *wait=2,warmup=1,active=2,repeat=2,skip_first=0 (steps: auto)*
# expect: *bad schedule: 2 *invalid --schedule: 'every=3' is not one of wait=W, warmup=U, active=A, repeat=R, skip_first=S, skip_first_wait=B*
# expect: *no active: 2 *active must be given, at least 1*
# expect: *bad number: 2 *'wait=-1' needs a whole number of steps*
# expect: *bad step: 2 *invalid --step 'frames': expected one of auto, api, torch, nvtx:NAME, kernel:NAME*
# Steps counted per process and chosen as torch.profiler.schedule chooses them: a step record where
# a warmup or active step begins and where the step after an active one begins ("after"), nothing
# for the steps waited through. The program marks steps through the injection library's entry
# point (what gpujit_profile_step() and gpujit.step() call; ctypes here, so no GPU is needed).
steps() { # SCHEDULE-ARGS... -- N SRC: N boundaries from source SRC (0 api, 1 torch)
  local n=$1 src=$2; shift 2
  rm -rf rec
  "$GPUJIT" profile -q --keep rec "$@" -- python3 -c "
import ctypes; f = ctypes.CDLL(None).gpujit_inject_step
for s in '$src'.split(','):
    [f(int(s)) for _ in range($n)]" >/dev/null 2>&1
  python3 - <<'PY'
import glob, json
rows, srcs = [], set()
for f in sorted(glob.glob("rec/*.jsonl")):
    for line in open(f):
        r = json.loads(line)
        if r["k"] == "step":
            rows.append("%d:%s:%d" % (r["n"], r["phase"], r["cycle"]))
            srcs.add(r["src"])
print(" ".join(rows), "|", " ".join(sorted(srcs)))
PY
}
echo "plain: $(steps 20 0 --schedule wait=2,warmup=1,active=2,repeat=2)"
echo "skip_first: $(steps 20 0 --schedule skip_first=3,warmup=1,active=1,repeat=1)"
echo "skip_first_wait: $(steps 20 0 --schedule skip_first=2,wait=3,warmup=1,active=1,repeat=2,skip_first_wait=1)"
echo "repeat 0: $(steps 8 0 --schedule wait=1,active=1)"
echo "step 0 recorded: $(steps 3 0 --schedule active=1,repeat=1)"
echo "no schedule: $(steps 3 0)"
echo "torch under api: $(steps 5 1 --step api --schedule active=1)"
echo "auto takes the first: $(steps 4 0,1 --schedule wait=1,active=1,repeat=1)"
"$GPUJIT" profile --schedule wait=2,warmup=1,active=2,repeat=2 -- python3 -c "import ctypes; ctypes.CDLL(None).gpujit_inject_step(0)" 2>&1 | grep 'note:'
for bad in "bad schedule:--schedule wait=1,every=3" "no active:--schedule wait=3" "bad number:--schedule wait=-1,active=1" \
           "bad step:--step frames"; do
  label=${bad%%:*} args=${bad#*:}
  # shellcheck disable=SC2086
  out=$("$GPUJIT" profile $args -- true 2>&1); echo "$label: $? $out"
done
