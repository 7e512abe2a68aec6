# exit: 0
# expect: *--html to a FIFO nobody reads: 4 *cannot write page.fifo (a FIFO that nothing reads (waited 2 s for a reader)*
# expect: *--json to a FIFO nobody reads: 4 *cannot write j.fifo (a FIFO that nothing reads*
# expect: *--html to a FIFO with a reader: 0 <!doctype html>*
# expect: *-o /dev/stdout: 0 first member gpujit-profile.json, reported again: 0*
# expect: *--json=/dev/stdout --trace /dev/stderr: 0 json yes, trace yes*
# An output that is a FIFO no one reads is an error after a short wait (before: the profile hung
# for ever at its end, as `timeout` shows by 124); one with a reader is written through.
# /dev/stdout is written through as docs/profile.md says (before: refused as a symbolic link).
here=$(cd "$EXAMPLES/../tests" && pwd)
r() { out=$("$@" 2>&1); echo "$? $out"; }
python3 "$here/profile/make_records.py" rec
$GPUJIT profile report rec -q -o in.gjprof
mkfifo page.fifo j.fifo
echo "--html to a FIFO nobody reads: $(r timeout 30 $GPUJIT profile report in.gjprof -q --html page.fifo)"
echo "--json to a FIFO nobody reads: $(r timeout 30 $GPUJIT profile report in.gjprof -q --json=j.fifo)"
cat page.fifo > got.html & reader=$!
rc=$(timeout 30 $GPUJIT profile report in.gjprof -q --html page.fifo; echo $?); wait $reader
echo "--html to a FIFO with a reader: $rc $(head -c 15 got.html | tr 'A-Z' 'a-z')"
$GPUJIT profile report in.gjprof -q -o /dev/stdout > out.gjprof; rc=$?
echo "-o /dev/stdout: $rc first member $(tar tf out.gjprof | head -1), reported again: $($GPUJIT profile report out.gjprof -q; echo $?)"
$GPUJIT profile report in.gjprof -q --json=/dev/stdout --trace /dev/stderr > j.out 2> t.out; rc=$?
echo "--json=/dev/stdout --trace /dev/stderr: $rc json $(python3 -c 'import json; json.load(open("j.out")); print("yes")')," \
  "trace $(python3 -c 'import json; print("yes" if json.load(open("t.out"))["traceEvents"] else "no")')"
