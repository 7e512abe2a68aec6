# exit: 0
# expect: *a tool's -o FIFO: the run ended, exit 0*
# expect: *its compile recorded, no output hash: yes*
# A tool whose output is a FIFO (or a device) is not opened to hash it at its exit: opening a
# FIFO with no writer waits for one, so the tool — and the profiled program — hung at exit.
mkfifo out.fifo
cp "$(type -P true)" ./ptxas
printf '.version 8.0\n' > k.ptx
timeout 30 $GPUJIT profile -q --json p.json -- ./ptxas -arch=sm_90 -o out.fifo k.ptx; rc=$?
echo "a tool's -o FIFO: the run ended, exit $rc"
python3 - <<'PY'
import json
c = [x for x in json.load(open("p.json"))["compiles"] if x["kind"] == "ptxas"]
print("its compile recorded, no output hash: %s" % ("yes" if len(c) == 1 and not c[0].get("cubin_bytes") else c))
PY
