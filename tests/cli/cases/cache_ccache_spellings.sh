# exit: 0
# expect: *-M 2G: 0 limit     2 GB (the cache's setting)*
# expect: *--max-size 1G alone: 0 limit     1 GB (the cache's setting)*
# expect: *-s: 0 path*hits      1*misses    1*
# expect: *--show-stats json: hits 1 misses 1*
# expect: *-z: 0 counters zeroed*
# expect: *-p: 0 path      */c (--cache-dir)*limit     1 GB (the cache's setting)*GPUJIT_BASE_DIR          /somewhere*
# expect: *--show-config json: gpujit-cache-config --cache-dir 1000000000*
# expect: *--evict-older-than 1s: 0 removed 1 entry*
# expect: *-C: 0 removed 0 entries*
# expect: *--max-size 1G stats: 2 *option '--max-size' does not apply to 'stats' (it is for 'prune', or alone sets the limit)*
# expect: *--remove stats: 2 *option '--remove' does not apply to 'stats' (it is for 'verify')*
# expect: *--key ls: 2 *option '--key' does not apply to 'ls' (it is for 'export')*
# expect: *-s -C: 2 *'-s' and '-C' are two commands: give one*
# expect: *-s zero: 2 *'-s' and 'zero' are two commands: give one*
# expect: *stats extra: 2 *unexpected argument 'extra': 'stats' takes none*
# expect: *--show-stat: 2 *unknown option '--show-stat' (did you mean '--show-stats'?)*
# expect: *--evict-older-than 7x: 2 *--evict-older-than: invalid age '7x'*
# expect: *no command: 2 *no command given: one of path, ls*
# expect: *limit twice: 2 *the limit given twice: '1G' and '2G'*
# expect: *301st key: 0 exported 1 entry to e.tar*
# ccache's habits work in `gpujit cache`: -s/--show-stats, -z/--zero-stats, -M/--max-size, -C/--clear,
# -p/--show-config, --evict-older-than AGE; an option given to a command it does not apply to, a
# second command or an extra operand is a usage error naming it (exit 2), never ignored.
r() { out=$("$@" 2>&1); echo "$? $out"; }
cp "$EXAMPLES/saxpy.cu" .
g() { "$GPUJIT" cache --cache-dir c "$@"; }
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu
# --key is not cut at 256: the entry's own key comes 301st
key=$(g --json ls | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"][0]["key"])')
keys=(); for i in $(seq 300); do keys+=(--key "$(printf '%032x' "$i")"); done
echo "301st key: $(r g export e.tar "${keys[@]}" --key "$key")"
echo "-M 2G: $(r g -M 2G)"
echo "--max-size 1G alone: $(r g --max-size 1G)"
echo "-s: $(r g -s)"
echo "--show-stats json: $(r g --json --show-stats | python3 -c 'import json,sys; t=sys.stdin.read(); s=json.loads(t[t.index("{"):]); print("hits", s["hits"], "misses", s["misses"])')"
echo "-z: $(r g -z)"
echo "-p: $(GPUJIT_BASE_DIR=/somewhere r g -p)"
echo "--show-config json: $(r g --show-config --json | python3 -c 'import json,sys; t=sys.stdin.read(); s=json.loads(t[t.index("{"):]); print(s["format"], s["path_source"], s["limit_bytes"])')"
sleep 2
echo "--evict-older-than 1s: $(r g --evict-older-than 1s)"
echo "-C: $(r g -C)"
echo "--max-size 1G stats: $(r g --max-size 1G stats)"
echo "--remove stats: $(r g --remove stats)"
echo "--key ls: $(r g --key abcd ls)"
echo "-s -C: $(r g -s -C)"
echo "-s zero: $(r g -s zero)"
echo "stats extra: $(r g stats extra)"
echo "--show-stat: $(r g --show-stat)"
echo "--evict-older-than 7x: $(r g --evict-older-than 7x)"
echo "no command: $(r g)"
echo "limit twice: $(r g --max-size 1G limit 2G)"
