# exit: 0
# expect: *-sv: 0 path*hits      0*misses    1*limit     5 GiB, 0.0 % used (the cache's setting)*remote    0 hits*
# expect: *-s: 0 path*limit     5 GiB, 0.0 % used*
# expect: *-sz: 0 path*misses    1*counters zeroed (entries kept)*after -sz: misses 0 entries 1*
# expect: *-s -z: 0 path*hits      1*counters zeroed (entries kept)*after -s -z: misses 0 hits 0*
# expect: *-z -s: 0 counters zeroed (entries kept)*path*hits      0*
# expect: *-sz --json: one document gpujit-cache-stats hits 1, zeroed after: 0*
# expect: *--show-stats --zero-stats: 0 path*counters zeroed*
# expect: *-sC: 2 *'-s' and '-C' are two commands: give one*
# expect: *-sx: 2 *unknown option '-sx'*
# ccache's combined spellings: -sv (verbose stats), -s -z and -sz (print the counters, then zero
# them, as a CI step does), and -s showing the size against the limit in percent (ccache -s).
r() { out=$("$@" 2>&1); echo "$? $out"; }
g() { "$GPUJIT" cache --cache-dir c "$@"; }
cp "$EXAMPLES/saxpy.cu" .
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu || exit 1
g -M 5 >/dev/null
echo "-sv: $(r g -sv)"
echo "-s: $(r g -s)"
echo "-sz: $(r g -sz)"
echo "after -sz: $(g --json stats | python3 -c 'import json,sys; s=json.load(sys.stdin); print("misses", s["misses"], "entries", s["entries"])')"
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu || exit 1
echo "-s -z: $(r g -s -z)"
echo "after -s -z: $(g --json stats | python3 -c 'import json,sys; s=json.load(sys.stdin); print("misses", s["misses"], "hits", s["hits"])')"
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu || exit 1
echo "-z -s: $(r g -z -s)"
"$GPUJIT" build -q --cache-dir c --arch sm_90 -o s.cubin saxpy.cu || exit 1
echo "-sz --json: $(g -sz --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("one document", d["format"], "hits", d["hits"], end="")'), zeroed after: $(g --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["hits"])')"
echo "--show-stats --zero-stats: $(r g --show-stats --zero-stats)"
echo "-sC: $(r g -sC)"
echo "-sx: $(r g -sx)"
