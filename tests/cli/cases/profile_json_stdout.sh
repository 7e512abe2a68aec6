# exit: 0
# expect: *json pipe: gpujit-profile exit 4*
# expect: *program's stdout on stderr: yes*
# expect: *program's stderr on stderr: yes*
# expect: *csv pipe: 1 header name,kernel,origin*
# expect: *json to a file keeps stdout: <program line>*
# expect: *both on stdout: 2 *--json and --csv cannot both go to stdout*
# expect: *csv= empty: 2 *--csv= needs a file name*
# expect: *jq: gpujit-profile*
# `gpujit profile --json -- prog | jq` reads the JSON alone: while --json (or --csv) takes
# stdout, the program's own stdout goes to stderr, where nothing it prints is lost; with a file
# (--json=FILE) the program's stdout stays its own.
r() { out=$("$@" 2>&1); echo "$? $out"; }
$GPUJIT profile --json -- sh -c 'echo program line; echo program err >&2; exit 4' 2>err.txt > out.json
python3 -c 'import json; d = json.load(open("out.json")); print("json pipe:", d["format"], "exit", d["totals"]["exit_status"])'
grep -q "^program line$" err.txt && echo "program's stdout on stderr: yes"
grep -q "^program err$" err.txt && echo "program's stderr on stderr: yes"
$GPUJIT profile --csv -- sh -c 'echo program line' 2>/dev/null > out.csv
echo "csv pipe: $(wc -l < out.csv) header $(head -1 out.csv)"
echo "json to a file keeps stdout: <$($GPUJIT profile -q --json=p.json -- sh -c 'echo program line')>"
echo "both on stdout: $(r $GPUJIT profile --json --csv -- true)"
echo "csv= empty: $(r $GPUJIT profile --csv= -- true)"
if command -v jq >/dev/null; then
  echo "jq: $($GPUJIT profile --json -- sh -c 'echo noise' 2>/dev/null | jq -r .format)"
else
  echo "jq: gpujit-profile (no jq here: python read it above)"
fi
