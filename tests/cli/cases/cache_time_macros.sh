# exit: 0
# expect: *plain: miss hit*
# expect: *time: uncacheable uncacheable*
# expect: *header date: uncacheable uncacheable*
# expect: *why: *k2.cu uses __TIME__ (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)*
# expect: *opted in: miss hit*
# expect: *hits 1 misses 1 uncacheable 2 *
# expect: *json: hits 1 misses 1 uncacheable 2 rate 0.50*
# expect: *record: uncacheable True*
# A build that expands __TIME__, __DATE__ or __TIMESTAMP__ (in the source or a header) is not
# served from the cache, as in ccache, unless GPUJIT_CACHE_TIME_MACROS=1; -v says why it missed.
printf 'extern "C" __global__ void k(int *o) { *o = 1; }\n' > k1.cu
printf 'extern "C" __global__ void k(char *o) { const char *t = __TIME__; for (int i = 0; i < 8; i++) o[i] = t[i]; }\n' > k2.cu
printf '#define STAMP __DATE__\n' > h.h
printf '#include "h.h"\nextern "C" __global__ void k(char *o) { *o = STAMP[0]; }\n' > k3.cu
st() { $GPUJIT build "$1" --ptx -o out.ptx | head -1 | grep -o 'uncacheable\|miss\|hit'; }
echo "plain: $(st k1.cu) $(st k1.cu)"
echo "time: $(st k2.cu) $(st k2.cu)"
echo "header date: $(st k3.cu) $(st k3.cu)"
echo "why: $($GPUJIT -v build k2.cu --ptx -o out.ptx 2>&1 | grep 'not cached')"
export GPUJIT_CACHE_TIME_MACROS=1
echo "opted in: $(st k2.cu) $(st k2.cu)"
unset GPUJIT_CACHE_TIME_MACROS
# counted apart: uncacheable builds are not misses (ccache's "uncacheable"), so not in the hit rate
$GPUJIT cache --cache-dir stc zero >/dev/null 2>&1
$GPUJIT build --cache-dir stc k2.cu --ptx -o out.ptx >/dev/null; $GPUJIT build --cache-dir stc k2.cu --ptx -o out.ptx >/dev/null
$GPUJIT build --cache-dir stc k1.cu --ptx -o out.ptx >/dev/null; $GPUJIT build --cache-dir stc k1.cu --ptx -o out.ptx >/dev/null
$GPUJIT cache --cache-dir stc stats | grep -E '^(hits|misses|uncacheable) ' | tr -s ' \n' ' '; echo
$GPUJIT cache --cache-dir stc --json stats | python3 -c 'import json,sys; s=json.load(sys.stdin); print("json: hits %d misses %d uncacheable %d rate %.2f" % (s["hits"], s["misses"], s["uncacheable"], s["hit_rate"]))'
$GPUJIT build --cache-dir stc --json k2.cu --ptx -o out.ptx | python3 -c 'import json,sys; r=json.load(sys.stdin)["modules"][0]; print("record: uncacheable", r.get("uncacheable"))'
