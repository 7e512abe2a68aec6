# exit: 0
# expect: *missing: 127 *no-such-command-here: command not found*
# expect: *not executable: 126 *cannot run it*
# expect: *json before --: 0 *"format":*"gpujit-profile",*
# expect: *json at the end: 2 *no command to run*
# expect: *json unwritable: 4 *cannot write nowhere/p.json*status 3*
# expect: *out unwritable: 4 *cannot write nowhere/o.txt*
# expect: *trace unwritable: 4 *cannot write nowhere/t.json*
# expect: *keep a file: 2 *not a directory*
# expect: *kept file untouched: yes*
# reject: *wrote a file named --*
# gpujit profile follows the shell's conventions for a command it cannot start, names an option
# left without its value (--json alone is JSON on stdout, as everywhere), fails visibly (after the command ran, with its status) when the report
# cannot be written, even with -q, and checks --keep before the command starts.
r() { out=$("$@" 2>&1); echo "$? $out"; }
echo "missing: $(r $GPUJIT profile -- no-such-command-here)"
printf 'echo hi\n' > script.sh
echo "not executable: $(r $GPUJIT profile -- ./script.sh)"
echo "json before --: $(r $GPUJIT profile --json -- true)"
[ -e -- ] && echo "wrote a file named --"
echo "json at the end: $(r $GPUJIT profile --json)"
echo "json unwritable: $(r $GPUJIT profile -q --json nowhere/p.json -- sh -c 'exit 3')"
echo "out unwritable: $(r $GPUJIT profile -o nowhere/o.txt -- true)"
echo "trace unwritable: $(r $GPUJIT profile -q --trace nowhere/t.json -- true)"
echo keep > kept
echo "keep a file: $(r $GPUJIT profile --keep kept -- touch ran)"
[ "$(cat kept)" = keep ] && [ ! -e ran ] && echo "kept file untouched: yes"
