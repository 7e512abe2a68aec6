# exit: 0
# expect: *saved from the records: 0*
# expect: *trace of the saved profile: 0*
# expect: *its own NVRTC phases: yes*
# expect: *the reader's secret: absent*
# expect: *records directory's trace: its own phases yes, the secret absent*
# reject: *SECRET-7f3a9c*
# A saved profile made elsewhere is only data: a record that names a file on the reader's disk
# (here an NVRTC phase file "$PWD/secret.json", absolute, outside the profile) is never read into
# the exported trace. Before, `report --trace` copied that file's events into the trace. The
# profile's own phase file (saved with its records) is still read.
python3 - <<'PY'
import json, os
os.makedirs("rec")
here = os.getcwd()
T0 = 1_700_000_000_000_000_000
with open("secret.json", "w") as f:  # the reader's file: its name must never reach the trace
    json.dump({"traceEvents": [{"ph": "X", "name": "SECRET-7f3a9c", "ts": 1, "dur": 5}]}, f)
with open("rec/nvrtc-4100-1.json", "w") as f:  # the run's own phase file, beside its records
    json.dump({"traceEvents": [{"ph": "X", "name": "PHASE-OWN", "ts": 1, "dur": 5}]}, f)
def nvrtc(name, trace, t):
    return {"k": "nvrtc", "pid": 4100, "tid": 4100, "name": name, "src_hash": "a1" * 16, "headers": 0,
            "options": ["--gpu-architecture=sm_90"], "added": ["--fdevice-time-trace=x"], "nvrtc_trace": trace,
            "t0": T0 + t, "t1": T0 + t + 40_000_000, "result": 0}
recs = [{"k": "proc", "v": 1, "pid": 4100, "tid": 4100, "ppid": 1, "exe": "/usr/bin/python3", "cmd": "python3 a.py", "t": T0},
        nvrtc("own.cu", here + "/rec/nvrtc-4100-1.json", 1_000_000),
        nvrtc("evil.cu", here + "/secret.json", 50_000_000),
        {"k": "exit", "pid": 4100, "tid": 4100, "t": T0 + 200_000_000, "status": 0, "lost": 0}]
with open("rec/p4100-%d.jsonl" % T0, "w") as f:
    f.write("".join(json.dumps(r) + "\n" for r in recs))
PY
$GPUJIT profile report rec -q -o sent.gjprof; echo "saved from the records: $?"
$GPUJIT profile report rec -q --trace rec.trace.json
mv rec rec.gone # the profile is all the reader has; the secret stays where the record says
$GPUJIT profile report sent.gjprof -q --trace t.json; echo "trace of the saved profile: $?"
grep -q PHASE-OWN t.json && echo "its own NVRTC phases: yes"
grep -q SECRET-7f3a9c t.json && echo "the reader's secret: COPIED" || echo "the reader's secret: absent"
echo "records directory's trace: its own phases $(grep -q PHASE-OWN rec.trace.json && echo yes || echo no)," \
  "the secret $(grep -q SECRET-7f3a9c rec.trace.json && echo COPIED || echo absent)"
