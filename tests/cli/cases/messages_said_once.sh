# exit: 0
# expect: *GPUJIT_ARCH=sm_0: 2 gpujit: error: invalid GPUJIT_ARCH 'sm_0': expected sm_XX or compute_XX (e.g. sm_90, compute_90)*
# expect: *GPUJIT_CACHE_MAX_SIZE=1Q: 0 gpujit: warning: GPUJIT_CACHE_MAX_SIZE: invalid size '1Q': expected a number with kB, MB, GB, TB*
# reject: *GPUJIT_ARCH: GPUJIT_ARCH*
# reject: *GPUJIT_CACHE_MAX_SIZE: GPUJIT_CACHE_MAX_SIZE*
# reject: *invalid --arch*
# A message with context added to the last one says each part once, whole. Before: the context
# was printed into the buffer it read from ("GPUJIT_CACHE_MAX_SIZE: GPUJIT_CACHE_MAX_SIZE: cted a
# number ...", "GPUJIT_ARCH: GPUJIT_ARCH: h 'sm_0'"), and the variable was called "--arch".
r() { out=$("$@" 2>&1); echo "$? $out"; }
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
echo "GPUJIT_ARCH=sm_0: $(r env GPUJIT_ARCH=sm_0 $GPUJIT build -q k.cu)"
echo "GPUJIT_CACHE_MAX_SIZE=1Q: $(r env GPUJIT_CACHE_MAX_SIZE=1Q $GPUJIT cache stats --json=s.json)"
