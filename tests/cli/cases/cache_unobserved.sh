# exit: 0
# expect: *first: *not cached: what NVRTC reads cannot be observed (GPUJIT_BENCH_OBSERVE=0 turned observing off)*
# expect: *again: *cache miss*
# expect: *miss_reason: *not cached: what NVRTC reads cannot be observed*
# expect: *observed: *hit*
# A compile whose reads cannot be observed is built and not cached, and says why: under -v and in
# the build record's miss_reason — never a record guessed from the sources.
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
b() { "$GPUJIT" build -v --cache-dir c --arch sm_90 -o k.cubin "$@" k.cu 2>&1; }
echo "first: $(GPUJIT_BENCH_OBSERVE=0 b | grep 'not cached')"
echo "again: $(GPUJIT_BENCH_OBSERVE=0 b | grep -o 'cache miss')"
echo "miss_reason: $(GPUJIT_BENCH_OBSERVE=0 "$GPUJIT" build --json --cache-dir c --arch sm_90 -o k.cubin k.cu | python3 -c 'import json,sys; print(json.load(sys.stdin)["modules"][0]["miss_reason"])')"
b > /dev/null
echo "observed: $(b | grep -o ' hit ')"
