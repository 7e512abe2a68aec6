# exit: 0
# expect: *-M 5: 0 limit     5 GiB (the cache's setting)*
# expect: *entries after -M 5: 2*
# expect: *limit 5: 0 limit     5 GiB (the cache's setting)*
# expect: *limit 2GB: 0 limit     2 GB (the cache's setting)*
# expect: *limit 512MiB: 0 limit     512 MiB (the cache's setting)*
# expect: *-M 0: 0 limit     none*
# expect: *limit none: 0 limit     none*
# expect: *env 5: limit     5 GiB, 0.0 % used*
# expect: *-M 5X: 2 *invalid size '5X': expected a number with kB, MB, GB, TB (powers of 1000; k, K, M, G, T the same), KiB, MiB, GiB, TiB (powers of 1024; Ki, Mi, Gi, Ti the same) or B (bytes); a bare number is GiB; 0 or none: no limit*
# expect: *-M 5m: 2 *invalid size '5m'*
# expect: *setting after bad: 5 GiB*
# expect: *-M 1B: 0 limit     1 B (the cache's setting)*evicted   2 entries, * KiB, least recently used first*
# expect: *json evicted: 1 *
# expect: *prune --max-size 1: 0 removed 0 entries*
# expect: *help: *a bare number is GiB (-M 5: 5 GiB)*
# reject: *limit     5 B*
# Sizes read as ccache reads them: `gpujit cache -M 5` (and `cache limit 5`, GPUJIT_CACHE_MAX_SIZE=5)
# is 5 GiB, never 5 bytes (which evicted every entry, silently: then every build missed). kB/MB/GB
# are powers of 1000, KiB/MiB/GiB of 1024; 0 or none: no limit. A limit that evicts says so.
r() { out=$("$@" 2>&1); echo "$? $out"; }
g() { "$GPUJIT" cache --cache-dir c "$@"; }
n() { g stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])'; }
cp "$EXAMPLES/saxpy.cu" "$EXAMPLES/scale.cu" .
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu || exit 1
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o t.cubin scale.cu || exit 1
echo "-M 5: $(r g -M 5)"
echo "entries after -M 5: $(n)"
echo "limit 5: $(r g limit 5)"
echo "limit 2GB: $(r g limit 2GB)"
echo "limit 512MiB: $(r g limit 512MiB)"
echo "-M 0: $(r g -M 0)"
echo "limit none: $(r g limit none)"
echo "env 5: $(GPUJIT_CACHE_MAX_SIZE=5 g -s | grep '^limit')"
g -M 5 >/dev/null
echo "-M 5X: $(r g -M 5X)"
echo "-M 5m: $(r g -M 5m)"
echo "setting after bad: $(g limit | awk '{print $2, $3}')"
echo "-M 1B: $(r g -M 1B)"
g limit none >/dev/null
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu || exit 1
echo "json evicted: $(g limit 1B --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["evicted"], d["evicted_bytes"] > 0)')"
echo "prune --max-size 1: $(r g prune --max-size 1)"
echo "help: $(g --help | tr '\n' ' ')"
