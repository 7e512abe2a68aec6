# exit: 0
# expect: *kernel regions of saxpy.cu (process 4100, kernels saxpy<float>(int, float, float const\*, float\*)): one warp records; 2 reads, 30 launches, 6400 events*
# expect: *    region                      calls  cyc mean   cyc med   cyc p99   cyc max   ns mean    ns med    ns p99    ns max SM imb  warp imb*
# expect: *    load                         1920      1002      1001      1013      1300       523       503       613      1000   1.03      1.43*
# expect: *      reduce                     1280       400       400       410       450       200       200       210       240   1.01      1.10*
# expect: *    unmatched 2 events: a begin without its end or the reverse*
# expect: *kernel regions of scale.cu (process 4100, kernels scale(float\*, int)): one warp records; 1 read, 1 launch, 0 events*
# expect: *    (no region calls recorded)*
# expect: *    dropped 77 events: the buffer was full (GPUJIT_PROFILE_REGIONS sizes it*
# expect: *json: 3 rows; load: calls 1920 cycles_mean 1001.5 cycles_max 1300 reads 2 events 6400 module saxpy.cu*
# expect: *json: scale.cu: region '' dropped 77*
# expect: *trace: SM tracks \['SM 0', 'SM 1'\], 4 region slices, load at 141000.0 us for 0.6 us, cycles 1000*
# expect: *saved: the same JSON: yes*
# expect: *saved: the same table: yes*
# expect: *html: kernel_regions 3 rows in the page's data, its section: yes*
# expect: *without regions: no section: yes*
# The kernel regions the injection library read in a program's modules (records as it writes them:
# tests/profile/make_records.py --regions) in every output of the report: the table per module in
# the text (a nested region indented, dropped and unmatched events said), --json's kernel_regions
# (two reads merged: calls summed, means weighted, the max the largest), the trace's SM tracks of
# region slices, a saved profile, the HTML page.
here=$(cd "$EXAMPLES/../tests" && pwd)
python3 "$here/profile/make_records.py" --regions rec
$GPUJIT profile report rec --top 0 | sed -n '/kernel regions of/,$p'
$GPUJIT profile report rec -q --json=p.json -o rec.gjprof --trace t.json --html p.html
python3 - p.json t.json p.html <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
rows = d["kernel_regions"]
load = [r for r in rows if r["region"] == "load"][0]
print("json: %d rows; load: calls %d cycles_mean %g cycles_max %g reads %d events %d module %s" % (
    len(rows), load["calls"], load["cycles_mean"], load["cycles_max"], load["reads"], load["events"], load["module"]))
scale = [r for r in rows if r["module"] == "scale.cu"][0]
print("json: scale.cu: region '%s' dropped %d" % (scale["region"], scale["dropped"]))
t = json.load(open(sys.argv[2]))["traceEvents"]
sms = sorted(e["args"]["name"] for e in t if e.get("ph") == "M" and e["args"]["name"].startswith("SM "))
sl = [e for e in t if e.get("cat") == "region"]
first = min(sl, key=lambda e: e["ts"])
print("trace: SM tracks %s, %d region slices, %s at %.1f us for %g us, cycles %d" % (
    sms, len(sl), first["name"], first["ts"], first["dur"], first["args"]["cycles"]))
page = open(sys.argv[3], encoding="utf-8").read()
data = json.loads(re.search(r'id="gpujit-data">(.*?)</script>', page, re.S).group(1))
print("html: kernel_regions %d rows in the page's data, its section: %s" % (
    len(data["kernel_regions"]), "yes" if 'id="regions-section"' in page else "no"))
PY
$GPUJIT profile report rec.gjprof --json=saved.json
cmp -s p.json saved.json && echo "saved: the same JSON: yes" || diff p.json saved.json
[ "$($GPUJIT profile report rec --top 0 | tail -n +3)" = "$($GPUJIT profile report rec.gjprof --top 0 | tail -n +3)" ] &&
  echo "saved: the same table: yes"
python3 "$here/profile/make_records.py" plain
$GPUJIT profile report plain --top 0 | grep -q "kernel regions" || echo "without regions: no section: yes"
