# exit: 0
# expect: *plain: miss hit*
# expect: *time: miss miss*
# expect: *header date: miss miss*
# expect: *why: *k2.cu uses __TIME__ (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)*
# expect: *opted in: miss hit*
# A build that expands __TIME__, __DATE__ or __TIMESTAMP__ (in the source or a header) is not
# served from the cache, as in ccache, unless GPUJIT_CACHE_TIME_MACROS=1; -v says why it missed.
printf 'extern "C" __global__ void k(int *o) { *o = 1; }\n' > k1.cu
printf 'extern "C" __global__ void k(char *o) { const char *t = __TIME__; for (int i = 0; i < 8; i++) o[i] = t[i]; }\n' > k2.cu
printf '#define STAMP __DATE__\n' > h.h
printf '#include "h.h"\nextern "C" __global__ void k(char *o) { *o = STAMP[0]; }\n' > k3.cu
st() { $GPUJIT build "$1" --ptx -o out.ptx | head -1 | grep -o 'miss\|hit'; }
echo "plain: $(st k1.cu) $(st k1.cu)"
echo "time: $(st k2.cu) $(st k2.cu)"
echo "header date: $(st k3.cu) $(st k3.cu)"
echo "why: $($GPUJIT -v build k2.cu --ptx -o out.ptx 2>&1 | grep 'not cached')"
export GPUJIT_CACHE_TIME_MACROS=1
echo "opted in: $(st k2.cu) $(st k2.cu)"
