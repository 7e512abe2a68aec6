# exit: 0
# expect: *steps of process 5100 (from api; schedule wait=2,warmup=1,active=2,repeat=1 (steps: api)): the active ones*
# expect: *step 3: wall 1.000 ms, 6 launches, 6 kernels, 1 copies, 0 memsets; GPU busy 0.675 ms (68 %), idle waiting for the host 0.015 ms (2 %)*
# expect: *  0       7      5      0.450      0.690     4     0.240      70.0      95.0      95.0        0.165*
# expect: *  0       9      2      0.400      0.600     1     0.200     200.0     200.0     200.0        0.200*
# expect: *top kernels: gemm(float*, float*) ×3 0.600 ms (200.0 µs each); relu ×2 0.040 ms (20.0 µs each); bias ×1 0.010 ms (10.0 µs each)*
# expect: *mixed: busy 68 % of step 3, idle 32 % (2 % waiting for launches, median gap 70.0 µs)*
# expect: *step 4: wall 1.000 ms, 10 launches, 10 kernels, 0 copies, 0 memsets; GPU busy 0.100 ms (10 %), idle waiting for the host 0.810 ms (81 %)*
# expect: *launch-bound: the GPU idled 81 % of step 4 waiting for launches, median gap 90.0 µs between operations: CUDA graphs or fusion would pay*
# expect: *steps of process 5200 (from torch): the active ones*
# expect: *step 0: wall 0.400 ms, 1 launches, 1 kernels*(INCOMPLETE: still open when its process ended)*
# expect: *GPU-bound: busy 95 % of step 0: the kernels themselves are the time*
# expect: *json steps: (5100, 3, True, 1.0, 1.0, 2.0), (5100, 4, True, 1.0, 1.0, 3.0), (5200, 0, False, 0.4, 0.4, 1.5)*
# expect: *json step 3: launches 6 kernels 6 copies 1 gpu_ms 0.85 busy_ms 0.675 busy_pct 67.5 idle_ms 0.325 gaps 5 gap_ms 0.44 median 70.0 p90 200.0 max 200.0 host_wait_ms 0.015 pct 1.5 verdict mixed*
# expect: *json step 4: launches 10 kernels 10 busy_ms 0.1 gaps 9 gap_ms 0.81 median 90.0 p90 90.0 max 90.0 host_wait_ms 0.81 pct 81.0 verdict launch-bound*
# expect: *json step 0 of 5200: kernels 1 launches 1 busy_pct 95.0 verdict gpu-bound schedule '' src torch*
# expect: *json streams of step 3: (0, 7, 5, 0.45, 0.69, 0.02, 4, 0.24, 70.0, 95.0, 95.0, 0.165), (0, 9, 2, 0.4, 0.6, 0.1, 1, 0.2, 200.0, 200.0, 200.0, 0.2)*
# expect: *json devices: (0, 0, 7, 0.675, 67.5), (1, 0, 10, 0.1, 10.0), (2, 1, 1, 0.38, 95.0)*
# expect: *json kernels of step 3: ('_Z4gemmPfS_', 3, 0.6, 200.0), ('relu', 2, 0.04, 20.0), ('bias', 1, 0.01, 10.0)*
# expect: *json: no step holds wait_kernel, warm or late: yes*
# expect: *trace step slices: (5100, 'step 2', 'warmup', 1000.0), (5100, 'step 3', 'active', 1000.0), (5100, 'step 4', 'active', 1000.0), (5200, 'step 0', 'active', 400.0)*
# expect: *trace steps track named: yes*
# expect: *trace launch slices: 18 (cudaMemcpyAsync on thread 5101: 1)*
# expect: *trace flows: 18 starts, 18 finishes, ids matched: yes, bp e: yes, each from its launch to its own op: yes*
# expect: *trace ids fit 32 bits: yes*
# expect: *saved profile, the same steps: yes*
# expect: *html steps: 3 drawn: 7, 10, 1 ops; section: yes*
# expect: *saved profile, the same text: yes*
# expect: *note: process 5100: wait=2,warmup=1,active=2,repeat=1 (steps: api)*
# Steps (docs/profile.md "Steps"): the records of a run under --schedule (the step boundaries
# the injection library writes and the host side of each launch in recorded steps) explained per
# active step, each number worked out by hand in tests/profile/make_step_records.py: stream 7 of
# step 3 has gaps 5, 70, 95, 70 us (two of them waited on the host: its launches returned after
# the previous kernel ended), stream 9 one of 200 us (waited); the GPU idled, every stream, only
# 2300-2315 us while the host issued; step 4's ten kernels each waited 90 us for their launch.
here=$(cd "$EXAMPLES/../tests" && pwd)
python3 "$here/profile/make_step_records.py" rec
$GPUJIT profile report rec --json=p.json --trace=t.json -o s.gjprof
python3 - <<'PY'
import json
d = json.load(open("p.json"))
steps = d["steps"]
r = lambda x: float(round(x, 6))  # the numbers as floats, whichever way the JSON wrote them
_print = print
def print(*a):  # lists without [ ]: the expectations are globs, where [ ] is a class of characters
    _print(*[", ".join(map(str, x)) if isinstance(x, list) else x for x in a])
print("json steps:", [(s["pid"], s["step"], s["complete"], r(s["wall_ms"]), r(s["window_ms"]), r(s["start_ms"])) for s in steps])
s3, s4, b0 = steps
print("json step 3: launches %d kernels %d copies %d gpu_ms %s busy_ms %s busy_pct %s idle_ms %s gaps %d gap_ms %s "
      "median %s p90 %s max %s host_wait_ms %s pct %s verdict %s" % (
      s3["launches"], s3["kernels"], s3["copies"], r(s3["gpu_ms"]), r(s3["busy_ms"]), r(s3["busy_pct"]), r(s3["idle_ms"]),
      s3["gaps"], r(s3["gap_ms"]), r(s3["gap_median_us"]), r(s3["gap_p90_us"]), r(s3["gap_max_us"]),
      r(s3["host_wait_ms"]), r(s3["host_wait_pct"]), s3["verdict"]))
print("json step 4: launches %d kernels %d busy_ms %s gaps %d gap_ms %s median %s p90 %s max %s host_wait_ms %s pct %s "
      "verdict %s" % (s4["launches"], s4["kernels"], r(s4["busy_ms"]), s4["gaps"], r(s4["gap_ms"]), r(s4["gap_median_us"]),
      r(s4["gap_p90_us"]), r(s4["gap_max_us"]), r(s4["host_wait_ms"]), r(s4["host_wait_pct"]), s4["verdict"]))
print("json step 0 of 5200: kernels %d launches %d busy_pct %s verdict %s schedule %r src %s" % (
      b0["kernels"], b0["launches"], r(b0["busy_pct"]), b0["verdict"], b0["schedule"], b0["src"]))
print("json streams of step 3:", [(x["device"], x["stream"], x["ops"], r(x["busy_ms"]), r(x["span_ms"]), r(x["start_ms"]),
      x["gaps"], r(x["gap_ms"]), r(x["gap_median_us"]), r(x["gap_p90_us"]), r(x["gap_max_us"]), r(x["host_wait_ms"]))
      for x in d["step_streams"] if x["step"] == s3["id"]])
print("json devices:", [(x["step"], x["device"], x["ops"], r(x["busy_ms"]), r(x["busy_pct"])) for x in d["step_devices"]])
print("json kernels of step 3:", [(k["name"], k["count"], r(k["total_ms"]), r(k["mean_us"]))
      for k in d["step_kernels"] if k["step"] == s3["id"]])
names = {k["name"] for k in d["step_kernels"]}
print("json: no step holds wait_kernel, warm or late:", "yes" if not names & {"wait_kernel", "warm", "late"} else names)

t = json.load(open("t.json"))["traceEvents"]
sl = [e for e in t if e.get("cat") == "step"]
print("trace step slices:", [(e["pid"], e["name"], e["args"]["phase"], r(e["dur"])) for e in sl])
print("trace steps track named:", "yes" if any(e["ph"] == "M" and e["args"]["name"] == "steps" and e["tid"] == sl[0]["tid"]
                                            for e in t) else "no")
la = [e for e in t if e.get("cat") == "launch" and e["ph"] == "X"]
print("trace launch slices: %d (cudaMemcpyAsync on thread 5101: %d)" % (
      len(la), sum(e["name"] == "cudaMemcpyAsync" and e["tid"] == 5101 for e in la)))
fs = [e for e in t if e.get("cat") == "launch" and e["ph"] == "s"]
ff = [e for e in t if e.get("cat") == "launch" and e["ph"] == "f"]
ok = sorted(e["id"] for e in fs) == sorted(e["id"] for e in ff) and len({e["id"] for e in fs}) == len(fs)
# each flow starts inside its launch slice and ends where its op's slice starts, on the op's track
byid = {e["id"]: e for e in ff}
own = all(any(l["pid"] == s["pid"] and l["tid"] == s["tid"] and l["ts"] <= s["ts"] <= l["ts"] + l["dur"] for l in la)
          and any(o.get("cat") in ("kernel", "copy") and o["pid"] == byid[s["id"]]["pid"] and o["tid"] == byid[s["id"]]["tid"]
                  and abs(o["ts"] - byid[s["id"]]["ts"]) < 1e-6 for o in t) for s in fs)
print("trace flows: %d starts, %d finishes, ids matched: %s, bp e: %s, each from its launch to its own op: %s" % (
      len(fs), len(ff), "yes" if ok else "no", "yes" if all(e.get("bp") == "e" for e in ff) else "no",
      "yes" if own else "no"))
print("trace ids fit 32 bits:", "yes" if all(0 <= e.get(k, 0) < 2**32 for e in t for k in ("pid", "tid", "id")) else "no")
PY
$GPUJIT profile report s.gjprof --json=s.json -q
python3 -c 'import json; a, b = json.load(open("p.json")), json.load(open("s.json")); print("saved profile, the same steps:", "yes" if all(a[k] == b[k] for k in ("steps", "step_devices", "step_streams", "step_kernels")) else "no")'
[ "$($GPUJIT profile report rec | tail -n +3)" = "$($GPUJIT profile report s.gjprof | tail -n +3)" ] &&
  echo "saved profile, the same text: yes"
# the HTML page: a Steps section and each step's operations, from the step's start
$GPUJIT profile report s.gjprof -q --html p.html
python3 - <<'PY'
import json, re
s = open("p.html").read()
d = json.loads(re.search(r'<script type="application/json" id="gpujit-data">(.*?)</script>', s, re.S).group(1))
print("html steps: %d drawn: %s ops; section: %s" % (len(d["steps"]), ", ".join(str(len(x["ops"])) for x in d["step_ops"]),
      "yes" if 'id="steps-section"' in s and d["step_ops"][0]["ops"][0][:4] == [0, 20, 200, "k"] else "no"))
PY
