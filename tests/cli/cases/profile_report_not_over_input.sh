# exit: 0
# expect: *--json=input: 2 *--json in.gjprof is the saved profile being reported: writing it would replace it*
# expect: *-o input: 2 *-o in.gjprof is the saved profile being reported*
# expect: *--html by another name: 2 *--html ./d/../in.gjprof is the saved profile being reported*
# expect: *--trace by a hard link: 2 *--trace hard.gjprof is the saved profile being reported*
# expect: *--text input: 2 *--text in.gjprof is the saved profile being reported*
# expect: *the saved profile intact: yes*
# expect: *-o and --trace one file: 2 *-o and --trace both name out.gjprof: the one written last would be all that is left*
# expect: *--html and --text one new file: 2 *--text and --html both name ./new.x*
# expect: *nothing written: yes*
# expect: *profile --json=X -o X: 2 *-o and --json both name run.gjprof*
# expect: *the command did not run: yes*
# expect: *two outputs to /dev/null: 0*
# expect: *empty directory: 5 *empty: an empty directory: nothing to report*
# expect: *directory without records: 5 *junk: a directory holding no gpujit records: nothing to report*
# A report never destroys its input: an output naming the saved profile it reads (by its name, by
# another path to it, by a hard link) is refused before anything is read or written, as are two
# outputs naming one file (the one written last would be all that is left), on `profile` too
# before its command runs. An empty directory is no saved profile: an error, not an empty report.
here=$(cd "$EXAMPLES/../tests" && pwd)
r() { out=$("$@" 2>&1); echo "$? $out"; }
python3 "$here/profile/make_records.py" rec
$GPUJIT profile report rec -q -o in.gjprof
sum=$(cksum < in.gjprof)
mkdir d; ln in.gjprof hard.gjprof
echo "--json=input: $(r $GPUJIT profile report in.gjprof --json=in.gjprof)"
echo "-o input: $(r $GPUJIT profile report in.gjprof -o in.gjprof)"
echo "--html by another name: $(r $GPUJIT profile report in.gjprof --html ./d/../in.gjprof)"
echo "--trace by a hard link: $(r $GPUJIT profile report in.gjprof --trace hard.gjprof)"
echo "--text input: $(r $GPUJIT profile report in.gjprof --text in.gjprof)"
[ "$(cksum < in.gjprof)" = "$sum" ] && tar tf in.gjprof > /dev/null && echo "the saved profile intact: yes"
echo "-o and --trace one file: $(r $GPUJIT profile report in.gjprof -o out.gjprof --trace out.gjprof)"
echo "--html and --text one new file: $(r $GPUJIT profile report in.gjprof --text new.x --html ./new.x)"
[ ! -e out.gjprof ] && [ ! -e new.x ] && echo "nothing written: yes"
echo "profile --json=X -o X: $(r $GPUJIT profile --json=run.gjprof -o run.gjprof -- touch ran)"
[ ! -e ran ] && [ ! -e run.gjprof ] && echo "the command did not run: yes"
echo "two outputs to /dev/null: $(r $GPUJIT profile report in.gjprof -q --json=/dev/null --trace /dev/null)"
mkdir empty junk; echo hi > junk/notes.txt
echo "empty directory: $(r $GPUJIT profile report empty)"
echo "directory without records: $(r $GPUJIT profile report junk)"
