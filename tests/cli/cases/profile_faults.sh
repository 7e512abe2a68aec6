# exit: 0
# expect: *missing: 127 *no-such-command-here: command not found*
# expect: *not executable: 126 *cannot run it*
# expect: *json before --: 0 *"format":*"gpujit-profile",*
# expect: *json at the end: 2 *no command to run*
# expect: *json unwritable: 2 *--json nowhere/p.json: cannot write it: its directory does not exist*
# expect: *out unwritable: 2 *-o nowhere/o.txt.gjprof: cannot write it*
# expect: *trace unwritable: 2 *--trace nowhere/t.json: cannot write it*
# expect: *json a directory: 2 *--json adir: cannot write it: it is a directory*
# expect: *nothing ran: yes*
# expect: *json to a full disk: 3 *cannot write /dev/full*status 3*
# expect: *csv to a full disk, ran: 0 *cannot write /dev/full*
# expect: *keep a file: 2 *not a directory*
# expect: *kept file untouched: yes*
# reject: *wrote a file named --*
# gpujit profile follows the shell's conventions for a command it cannot start, names an option
# left without its value (--json alone is JSON on stdout, as everywhere), refuses before the command
# starts an output it could not write (and --keep), and when a write still fails after the run (a
# full disk) says so on stderr, even with -q, exiting with the command's own status.
r() { out=$("$@" 2>&1); echo "$? $out"; }
echo "missing: $(r $GPUJIT profile -- no-such-command-here)"
printf 'echo hi\n' > script.sh
echo "not executable: $(r $GPUJIT profile -- ./script.sh)"
echo "json before --: $(r $GPUJIT profile --json -- true)"
[ -e -- ] && echo "wrote a file named --"
echo "json at the end: $(r $GPUJIT profile --json)"
echo "json unwritable: $(r $GPUJIT profile -q --json nowhere/p.json -- sh -c 'exit 3')"
echo "out unwritable: $(r $GPUJIT profile -o nowhere/o.txt -- true)"
echo "trace unwritable: $(r $GPUJIT profile -q --trace nowhere/t.json -- touch ran1)"
mkdir adir
echo "json a directory: $(r $GPUJIT profile -q --json adir -- touch ran2)"
[ ! -e ran1 ] && [ ! -e ran2 ] && echo "nothing ran: yes"
echo "json to a full disk: $(r $GPUJIT profile -q --json /dev/full -- sh -c 'exit 3')"
echo "csv to a full disk, ran: $(r $GPUJIT profile -q --csv=/dev/full -- true)"
echo keep > kept
echo "keep a file: $(r $GPUJIT profile --keep kept -- touch ran)"
[ "$(cat kept)" = keep ] && [ ! -e ran ] && echo "kept file untouched: yes"
