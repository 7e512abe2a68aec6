# exit: 0
# expect: *every variable the sources read is listed: True*
# expect: *GPUJIT_CACHE_DIR*/the-cache*
# expect: *hit rate  50.0 % (1 of 2 lookups)*
# expect: *counters zeroed (entries kept)*
# expect: *after zero: hits 0 misses 0 entries 1*
# expect: *unknown command 'stat' (did you mean 'stats'?)*
# `gpujit env` lists every variable gpujit reads (GPUJIT_*, CUDA_*, and the system's: NO_COLOR,
# XDG_CACHE_HOME, HOME, TMPDIR, ...), with its value: checked
# against the sources, so it cannot fall behind. Cache stats give a hit rate; `cache zero` zeroes
# the counters and keeps the entries (ccache -z).
src="$(cd "$(dirname "$GPUJIT")/.." && pwd)/src"
# every name the sources read, gpujit's or the system's (NO_COLOR, XDG_CACHE_HOME, HOME, ...)
read_vars=$(grep -rhoE '(getenv|environ\.get)\("[A-Z][A-Z0-9_]+"' "$src" | grep -oE '"[A-Z][A-Z0-9_]+"' | tr -d '"' | sort -u)
proto_vars=$(grep -oE '"GPUJIT_PROFILE_[A-Z_]+"|"GPUJIT_CUPTI_LIBRARY"|"GPUJIT_(NVRTC|NVJITLINK)_LIBRARY"' -rh "$src" | tr -d '"' | sort -u)
listed=$("$GPUJIT" env --names)
missing=$(for v in $read_vars $proto_vars; do echo "$listed" | grep -qx "$v" || echo "$v"; done)
echo "every variable the sources read is listed: $([ -z "$missing" ] && echo True || echo "False: $missing")"
GPUJIT_CACHE_DIR=$PWD/the-cache "$GPUJIT" env | grep -A0 "GPUJIT_CACHE_DIR"
cp "$EXAMPLES/saxpy.cu" .
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu
"$GPUJIT" cache --cache-dir c stats | grep "hit rate"
"$GPUJIT" cache --cache-dir c zero
"$GPUJIT" cache --cache-dir c --json stats | python3 -c 'import json,sys; s=json.load(sys.stdin); print("after zero: hits %d misses %d entries %d" % (s["hits"], s["misses"], s["entries"]))'
"$GPUJIT" cache --cache-dir c stat 2>&1; echo "rc=$?"
