# exit: 0
# expect: *every command tried: True*
# expect: *every cache command tried: True*
# expect: *parsed: * of *, bad: none*
# reject: *BAD *
# Every command takes --json and prints one JSON object with its "format" and "version" (a
# script's contract, docs/json.md): today's commands and cache verbs are listed by the CLI itself
# (gpujit help --json, gpujit cache --help), so a new one without --json fails here.
cp "$EXAMPLES/saxpy.cu" "$EXAMPLES/scale.cu" .
data="$EXAMPLES/../tests/data"
c=$PWD/c
"$GPUJIT" build -q --cache-dir "$c" --arch sm_90 -o s.cubin --time-trace=a.json saxpy.cu || exit 1
"$GPUJIT" build -q --no-cache --arch sm_90 -o t.cubin --time-trace=b.json scale.cu || exit 1
key=$("$GPUJIT" cache --cache-dir "$c" --json ls | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"][0]["key"])')
tried=""
ok=0; all=0; bad=""
j() { # j NAME ARGS...: stdout must be one JSON object with format and version, whatever the exit code
  local name=$1; shift
  tried="$tried $name ${name%%.*}"
  all=$((all + 1))
  "$GPUJIT" "$@" > out.json 2> err.txt; local rc=$?
  if python3 -c 'import json,sys; d=json.load(open("out.json")); assert isinstance(d, dict) and d["format"].startswith("gpujit-") and d["version"] >= 1' 2>/dev/null; then
    ok=$((ok + 1))
  else
    bad="$bad $name"; echo "BAD $name (exit $rc): $(head -c 300 out.json) $(head -c 300 err.txt)"
  fi
}
j build build --json --cache-dir "$c" --arch sm_90 -o s.cubin saxpy.cu
j run run --json --arch sm_90 --cache-dir "$c" saxpy.cu --kernel saxpy --grid 1 --block 1 --arg i32:1 --arg f32:2 --arg buf:f32:1:zeros --arg buf:f32:1:zeros
for v in path ls stats zero config limit verify; do j "cache.$v" cache --cache-dir "$c" --json "$v"; done
j cache.show cache --cache-dir "$c" --json show "$key"
j cache.source cache --cache-dir "$c" --json source "$key"
j cache.export cache --cache-dir "$c" --json export e.tar
j cache.import cache --cache-dir "$PWD/c2" --json import e.tar
j cache.prune cache --cache-dir "$c" --json prune --older-than 7d
j cache.clear cache --cache-dir "$PWD/c2" --json clear
j ncu ncu hotspots --json "$data/ncu_saxpy_source.csv"
j trace trace analyze --json a.json
j trace.diff trace diff --json a.json b.json
j server server status --json --cache-dir "$c"
j profile profile -q --json -- true
j profile.report profile report --json
j env env --json
j version version --json
j help help --json
echo "parsed: $ok of $all, bad:${bad:- none}"
cmds=$("$GPUJIT" help --json | python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.load(sys.stdin)["commands"]))')
missing=""; for k in $cmds; do [[ " $tried " == *" $k "* ]] || missing="$missing $k"; done
echo "every command tried: $([ -z "$missing" ] && echo True || echo "False:$missing")"
verbs=$("$GPUJIT" cache --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && /^  [a-z]/ {print $1}')
missing=""; for k in $verbs; do [[ " $tried " == *" cache.$k "* ]] || missing="$missing $k"; done
echo "every cache command tried: $([ -z "$missing" ] && echo True || echo "False:$missing")"
