# exit: 0
# expect: *ptxas seen: yes*
# expect: *no dropped-variables note: yes*
# expect: *one build: 1 row, 1 compile, nvrtc+ptxas time: yes*
# expect: *ptxas's output recorded: the cubin gpujit wrote: yes*
# gpujit's own lean build under gpujit profile: the toolkit's ptxas, which gpujit runs through
# pipes with what is preloaded into gpujit taken out of its environment, keeps gpujit profile's
# injection library — it is recorded as every process is, with no note that gpujit's variables
# were dropped and put back — and it is told which NVRTC PTX its input was made from, so the
# report shows one build: one row, one compile, NVRTC's and ptxas's time together. Its cubin goes
# to a file in memory, not a pipe, so the record has its size and hash (a load of it is tied).
# a sanitizer build of gpujit cannot run with a library preloaded before its runtime
if ldd "$GPUJIT" 2>/dev/null | grep -q 'lib[at]san'; then echo "skip: gpujit is a sanitizer build"; exit 77; fi
out=$($GPUJIT profile -- $GPUJIT build --no-cache -o k.cubin "$EXAMPLES/saxpy.cu" 2>&1)
case "$out" in *"ptxas: 1 compile,"*) echo "ptxas seen: yes";; *) echo "$out" | grep -q "no ptxas" && { echo "skip: no ptxas"; exit 77; }; echo "$out";; esac
case "$out" in *"variables dropped"*) echo "$out" | grep note;; *) echo "no dropped-variables note: yes";; esac
$GPUJIT profile --json -- $GPUJIT build --no-cache -q -o k.cubin "$EXAMPLES/saxpy.cu" > p.json 2>/dev/null
python3 - p.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["modules"]
comp = {c["id"]: c for c in d["compiles"]}
nv = [c for c in comp.values() if c["kind"] == "nvrtc"]
px = [c for c in comp.values() if c["kind"] == "ptxas"]
ok = (len(rows) == 1 and rows[0]["compiles"] == 1 and len(nv) == 1 and len(px) == 1
      and px[0]["stage_of"] == nv[0]["id"] and nv[0]["stage_of"] == -1
      and abs(rows[0]["compile_ms"] - (nv[0]["ms"] + px[0]["ms"])) < 0.01
      and px[0]["module"] == rows[0]["name"] == nv[0]["module"])
print("one build: %d row, %d compile, nvrtc+ptxas time: %s" % (len(rows), rows[0]["compiles"] if rows else 0, "yes" if ok else "no"))
import os
print("ptxas's output recorded: the cubin gpujit wrote: %s" % ("yes" if px and px[0]["cubin_bytes"] == os.path.getsize("k.cubin") else px))
if not ok:
    print(json.dumps({"modules": rows, "compiles": list(comp.values())}, indent=1)[:3000])
PY
