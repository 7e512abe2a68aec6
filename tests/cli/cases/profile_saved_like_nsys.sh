# exit: 0
# expect: *-o run: 0 *run.gjprof made, run not made*
# expect: *again: 2 *-o run: run.gjprof exists; --force replaces it, or name another file*
# expect: *command ran: no, file untouched: yes*
# expect: *-o run.gjprof again: 2 *-o run.gjprof: run.gjprof exists*
# expect: *--force: 0 *replaced: yes*
# expect: *report -o existing: 2 *-o other: other.gjprof exists; --force replaces it*
# expect: *report -o existing --force: 0 *
# expect: *no -o: saved: */state/gpujit/last.gjprof (gpujit profile report)*
# expect: *last kept: yes*
# expect: *report, no NAME: 0 *echo the last one*
# expect: *report json, no NAME: gpujit-profile*
# expect: *no last profile: 4 *no NAME given and no last profile at */empty/gpujit/last.gjprof*
# expect: *HOME's: */home/.local/state/gpujit/last.gjprof*
# Saved profiles behave as nsys reports: `-o NAME` adds .gjprof where NAME lacks it and never
# replaces a file without --force (refused before the command runs: nothing spent, nothing lost).
# Without -o the profile is still kept, as perf keeps perf.data, in $XDG_STATE_HOME/gpujit (else
# ~/.local/state/gpujit), and `gpujit profile report` with no NAME reads it.
r() { out=$("$@" 2>&1); echo "$? $out"; }
export XDG_STATE_HOME=$PWD/state
echo "-o run: $(r $GPUJIT profile -q -o run -- true) $([ -f run.gjprof ] && echo run.gjprof made), run $([ -e run ] || echo not) made"
sum=$(md5sum < run.gjprof)
echo "again: $(r $GPUJIT profile -q -o run -- touch ran)"
echo "command ran: $([ -e ran ] && echo yes || echo no), file untouched: $([ "$(md5sum < run.gjprof)" = "$sum" ] && echo yes || echo no)"
echo "-o run.gjprof again: $(r $GPUJIT profile -q -o run.gjprof -- true)"
echo "--force: $(r $GPUJIT profile -q --force -o run -- sh -c 'echo other') replaced: $([ "$(md5sum < run.gjprof)" != "$sum" ] && echo yes || echo no)"
echo kept > other.gjprof
echo "report -o existing: $(r $GPUJIT profile report run.gjprof -q -o other) $(cat other.gjprof)"
echo "report -o existing --force: $(r $GPUJIT profile report run.gjprof -q --force -o other)"
echo "no -o: $($GPUJIT profile -- sh -c 'echo the last one' 2>&1 | grep '^saved:')"
echo "last kept: $([ -f state/gpujit/last.gjprof ] && echo yes || echo no)"
echo "report, no NAME: $(r $GPUJIT profile report)"
echo "report json, no NAME: $($GPUJIT profile report --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["format"])')"
echo "no last profile: $(XDG_STATE_HOME=$PWD/empty r $GPUJIT profile report)"
mkdir home
echo "HOME's: $(env -u XDG_STATE_HOME HOME=$PWD/home $GPUJIT profile -- true 2>&1 | grep '^saved:')"
