# exit: 0
# expect: *unknown command 'biuld' (did you mean 'build'?)*rc=2*
# expect: *trace written: True*
# expect: *x.zip: gpujit exports tar archives*rc=2*
# expect: *no zip left: True*
# expect: *GPU: not recorded (no process created a CUDA context)*
# reject: *see the notes*
# CLI conventions: a mistyped command gets the nearest; `--time-trace FILE.json` names the trace
# (a source is never .json); an export named for a format gpujit does not write is refused, with
# no file left behind; a profile with no notes points at none.
"$GPUJIT" biuld x.cu 2>&1; echo "rc=$?"
cp "$EXAMPLES/saxpy.cu" .
"$GPUJIT" build -q --arch sm_90 saxpy.cu --time-trace t.json -o s.cubin
python3 -c 'import json; print("trace written:", "traceEvents" in json.load(open("t.json")))'
"$GPUJIT" cache export x.zip 2>&1; echo "rc=$?"
python3 -c 'import os; print("no zip left:", not os.path.exists("x.zip"))'
"$GPUJIT" profile -- true 2>&1
