# exit: 0
# expect: *json kernels of step 1: 10 rows: k24 25.0, k23 24.0, k22 23.0, k21 22.0, k20 21.0, k19 20.0, k18 19.0, k17 18.0, k16 17.0, k15 16.0*
# expect: *step 1: wall 1.000 ms, 25 launches, 25 kernels*
# expect: *step 1: wall 1.000 ms, launches not recorded (--schedule records them), 25 kernels*
# expect: *idle: the GPU idled 68 % of step 1; without launch records (--schedule records them) launch-bound and host-bound cannot be told apart*
# A step that runs more kernel names than its top-kernels table keeps (a PyTorch training step
# runs dozens): the ten costliest are kept, and the others are summed aside — the report of a
# PyTorch MLP's steps once wrote past the table's end (munmap_chunk(): invalid pointer, found on
# the H200; the sanitized run of this case shows it).
here=$(cd "$EXAMPLES/../tests" && pwd)
python3 "$here/profile/make_step_records.py" --many-names rec
$GPUJIT profile report rec --json=p.json
python3 - <<'PY'
import json
k = [x for x in json.load(open("p.json"))["step_kernels"]]
print("json kernels of step 1: %d rows: %s" % (len(k), ", ".join("%s %.1f" % (x["name"], x["mean_us"]) for x in k)))
PY
# The same run recorded whole (no --schedule: kernels, no launch records): the text says the
# launches were not recorded, and the verdict does not guess who made the GPU wait.
mkdir rec2 && grep -hv '"k": "launch"' rec/*.jsonl > rec2/p5300-1.jsonl
$GPUJIT profile report rec2 | grep -E "step 1:|idle:"
