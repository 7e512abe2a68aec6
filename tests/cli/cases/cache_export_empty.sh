# exit: 0
# expect: *empty cache: 0 *warning: exported no entries: */nothing is empty (is it the cache the builds used? GPUJIT_CACHE_DIR, --cache-dir)*exported 0 entries to e.tar.zst*
# expect: *filtered: 0 *warning: exported no entries: */c has none that --used-since or --key chose*
# expect: *json: 0 *warning: exported no entries*{*"format":*"gpujit-cache-export"*"entries":*0*
# expect: *one entry: 0 exported 1 entry to k.tar.zst*
# reject: *one entry: 0 *warning*
# An export of no entries is a valid archive (exit 0: "nothing used in 7 days" is an answer), but
# a CI job saving it most likely exports another cache than its builds filled: it says so.
r() { out=$("$@" 2>&1); echo "$? $out"; }
echo "empty cache: $(r $GPUJIT cache --cache-dir "$PWD/nothing" export e.tar.zst)"
$GPUJIT build -q --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" -o s.cubin || exit 1
echo "filtered: $(r $GPUJIT cache --cache-dir "$PWD/c" export f.tar.zst --key ffff0000)"
echo "json: $(r $GPUJIT cache --cache-dir "$PWD/nothing" export --json j.tar.zst)"
echo "one entry: $(r $GPUJIT cache --cache-dir c export k.tar.zst)"
