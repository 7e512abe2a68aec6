# exit: 0
# expect: *limited: 0*
# expect: *cache store failed, continuing uncached:*would pass the file size limit (ulimit -f: 65536 bytes)*
# expect: *output: same*
# expect: *in the cache: 0 entries, 0 staged*
# reject: *File size limit*
# A cache store past the file size limit (ulimit -f) is skipped with a warning, not killed with
# SIGXFSZ (exit 153): the build succeeds with its output, and nothing half-written stays.
{ printf '// %s\n' $(seq 1 12000); printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n'; } > big.cu
$GPUJIT build -q --no-cache --arch sm_90 -o want.cubin big.cu || exit 1
out=$(bash -c "ulimit -f 64; exec $GPUJIT build --cache-dir c --arch sm_90 -o out.cubin big.cu" 2>&1); echo "limited: $?"
echo "$out"
echo "output: $(cmp -s want.cubin out.cubin && echo same || echo differs)"
echo "in the cache: $(find c/entries -mindepth 2 -maxdepth 2 2>/dev/null | wc -l) entries, $(find c/tmp -type f 2>/dev/null | wc -l) staged"
exit 0
