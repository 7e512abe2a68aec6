# exit: 0
# expect: *run saved: 3*
# expect: *tar first member: gpujit-profile.json*
# expect: *report of the saved run: 0 *exit 3, wall*
# expect: *the same JSON: yes*
# expect: *the same table: yes*
# expect: *csv rows: 5 header: name,kernel,origin*kernel_name kernel: saxpy<float>(int, float, float const*, float*)*
# expect: *csv to a file: 5 rows*
# expect: *trace events: yes*
# expect: *html: yes*
# expect: *re-saved the same: yes*
# expect: *records dir title: *python3 train.py*
# expect: *quiet report: 0 <>*
# expect: *kept directory: *exit 5, wall*
# expect: *unpacked saved profile, the same JSON: yes*
# expect: *records alone: *note: rec holds records without their run's manifest: the command's exit status is not known*
# expect: *report extra operand: 2 *one saved profile at a time*
# expect: *report unknown option: 2 *unknown option '--jsn'*did you mean '--json'*
# expect: *report no name: 4 *no NAME given and no last profile at */none/gpujit/last.gjprof*
# expect: *profile named report: 0*
# `gpujit profile -o NAME` saves a profile (a tar: its manifest first, then the records) that
# `gpujit profile report NAME` reports and exports again (--json, --csv, --trace, --html, -o)
# without running anything: the same document and table as the run's.
here=$(cd "$EXAMPLES/../tests" && pwd)
r() { out=$("$@" 2>&1); echo "$? $out"; }
$GPUJIT profile -q -o run.gjprof -- sh -c 'echo ran; exit 3'; echo "run saved: $?"
echo "tar first member: $(tar tf run.gjprof | head -1)"
echo "report of the saved run: $(r $GPUJIT profile report run.gjprof)"
# records with kernels, copies and two processes (no GPU needed), saved and reported again
python3 "$here/profile/make_records.py" rec
$GPUJIT profile report rec -q -o rec.gjprof --json=dir.json || echo "save failed: $?"
$GPUJIT profile report rec.gjprof --json=saved.json
cmp -s dir.json saved.json && echo "the same JSON: yes" || diff dir.json saved.json
[ "$($GPUJIT profile report rec --top 0 | tail -n +3)" = "$($GPUJIT profile report rec.gjprof --top 0 | tail -n +3)" ] &&
  echo "the same table: yes"
$GPUJIT profile report rec.gjprof --csv > m.csv
python3 - <<'PY'
import csv
rows = list(csv.reader(open("m.csv", newline="")))
print("csv rows:", len(rows) - 1, "header:", ",".join(rows[0]), "kernel:", rows[1][-1])
PY
$GPUJIT profile report rec.gjprof --csv=f.csv -q && echo "csv to a file: $(($(wc -l < f.csv) - 1)) rows"
$GPUJIT profile report rec.gjprof -q --trace t.json &&
  python3 -c 'import json; d = json.load(open("t.json")); print("trace events:", "yes" if any(e.get("cat") == "kernel" for e in d["traceEvents"]) else "no")'
$GPUJIT profile report rec.gjprof -q --html p.html && grep -q '<svg id="timeline"' p.html && echo "html: yes"
$GPUJIT profile report rec.gjprof -q -o again.gjprof && $GPUJIT profile report again.gjprof --json=again.json &&
  cmp -s saved.json again.json && echo "re-saved the same: yes"
echo "records dir title: $($GPUJIT profile report rec | sed -n 2p)"
echo "quiet report: $($GPUJIT profile report rec.gjprof -q; echo "$? <")>"
# a --keep directory holds the run's manifest beside the records: it reports as the run did, as
# a saved profile unpacked with tar does; records alone say what they do not know
$GPUJIT profile -q --keep kept -- sh -c 'exit 5'
echo "kept directory: $($GPUJIT profile report kept | sed -n 3p)"
mkdir unpacked && tar xf rec.gjprof -C unpacked && $GPUJIT profile report unpacked -q --json=unpacked.json &&
  cmp -s unpacked.json saved.json && echo "unpacked saved profile, the same JSON: yes"
echo "records alone: $($GPUJIT profile report rec | grep note:)"
echo "report extra operand: $(r $GPUJIT profile report rec.gjprof rec)"
echo "report unknown option: $(r $GPUJIT profile report rec.gjprof --jsn)"
echo "report no name: $(XDG_STATE_HOME=$PWD/none r $GPUJIT profile report)"
# a command named report still runs after "--"
mkdir bin && printf '#!/bin/sh\nexit 0\n' > bin/report && chmod +x bin/report
PATH="$PWD/bin:$PATH" $GPUJIT profile -q -- report; echo "profile named report: $?"
