# exit: 0
# expect: *--evict-older-than 1.5h: 2 *--evict-older-than: invalid age '1.5h': a whole number with s (seconds) or d (days), as in ccache*
# expect: *--evict-older-than 0x10d: 2 *--evict-older-than: invalid age '0x10d': a whole number with s (seconds) or d (days)*
# expect: *--evict-older-than 1e3: 2 *--evict-older-than: invalid age '1e3'*
# expect: *prune --older-than 1.5h: 2 *--older-than: invalid age '1.5h'*
# expect: *export --used-since 0x10d: 2 *--used-since: invalid age '0x10d'*
# expect: *--evict-older-than 3600: 2 *--evict-older-than: invalid age '3600': a number needs a unit, as in ccache: 3600s (seconds) or 3600d (days)*
# expect: *entries left: 1*
# expect: *--evict-older-than 7d: 0 removed 0 entries*
# A bare number is refused, as ccache refuses it: seconds or days is a guess, and a wrong one
# empties a cache. An age is whole digits and one unit: "1.5h" was read as 5400 s and "0x10d" as hex, 269 s (a
# cache pruned of entries that were not that old). Refused with what an age is; nothing removed.
r() { out=$("$@" 2>&1); echo "$? $out"; }
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
$GPUJIT build -q --arch sm_90 k.cu -o k.cubin || echo "build failed"
echo "--evict-older-than 1.5h: $(r $GPUJIT cache --evict-older-than 1.5h)"
echo "--evict-older-than 0x10d: $(r $GPUJIT cache --evict-older-than 0x10d)"
echo "--evict-older-than 1e3: $(r $GPUJIT cache --evict-older-than 1e3)"
echo "prune --older-than 1.5h: $(r $GPUJIT cache prune --older-than 1.5h)"
echo "export --used-since 0x10d: $(r $GPUJIT cache export --used-since 0x10d e.tar)"
echo "entries left: $($GPUJIT cache stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["entries"])')"
echo "--evict-older-than 7d: $(r $GPUJIT cache --evict-older-than 7d)"
echo "--evict-older-than 3600: $(r $GPUJIT cache --evict-older-than 3600)"
