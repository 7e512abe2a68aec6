# exit: 0
# expect: *plain: cache miss*
# expect: *again:  hit *
# expect: *link variable set: cache miss*NVJITLINK_TRACE_MESSAGES*
# expect: *link variable again:  hit *
# expect: *unset again:  hit *
# expect: *whole image, finalizer variable set: cache miss*CAN_FINALIZE_DEBUG*
# expect: *one source, link variable set:  hit *
# expect: *record names NVJITLINK_TRACE_MESSAGES: yes*
# expect: *record names LIBNVVM_NVVM_VERSION: yes*
# expect: *record names CAN_FINALIZE_DEBUG: yes*
# What nvJitLink reads of the environment is part of an LTO module's record, as NVRTC's is: a
# variable only a link reads (NVJITLINK_TRACE_MESSAGES in nvJitLinkCreate; CAN_FINALIZE_DEBUG in
# nvJitLinkComplete, where it makes a cubin rather than the lean pass's PTX) set or changed
# misses and says which; a module of one source, which no link makes, still hits.
printf 'extern __device__ float two(float);\nextern "C" __global__ void k(float *x) { x[0] = two(x[0]); }\n' > a.cu
printf '__device__ float two(float v) { return 2 * v; }\n' > b.cu
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > one.cu
status() { grep -oE 'cache miss[^|]*| hit [0-9.]+ ms' | head -1; }
b() { "$GPUJIT" build -v --cache-dir c --arch sm_90 -o ab.cubin "$@" a.cu b.cu 2>&1 | status; }
b1() { "$GPUJIT" build -v --cache-dir c1 --arch sm_90 -o one.cubin one.cu 2>&1 | status; }
unset NVJITLINK_TRACE_MESSAGES CAN_FINALIZE_DEBUG
echo "plain: $(b)"
echo "again: $(b)"
echo "link variable set: $(NVJITLINK_TRACE_MESSAGES=0 b) $(NVJITLINK_TRACE_MESSAGES=1 "$GPUJIT" build -v --cache-dir c --arch sm_90 -o ab.cubin a.cu b.cu 2>&1 | grep -o NVJITLINK_TRACE_MESSAGES | head -1)"
echo "link variable again: $(NVJITLINK_TRACE_MESSAGES=0 b)"
echo "unset again: $(b)"
b --no-lean >/dev/null
echo "whole image, finalizer variable set: $(CAN_FINALIZE_DEBUG=0 b --no-lean) $(CAN_FINALIZE_DEBUG=0 "$GPUJIT" build -v --no-lean --cache-dir c --arch sm_90 -o ab.cubin a.cu b.cu 2>&1 | grep -o CAN_FINALIZE_DEBUG | head -1)"
b1 >/dev/null
echo "one source, link variable set: $(NVJITLINK_TRACE_MESSAGES=0 b1)"
yn() { if grep -rqs "$1" c/manifests; then echo yes; else echo no; fi; }
echo "record names NVJITLINK_TRACE_MESSAGES: $(yn '"env":"NVJITLINK_TRACE_MESSAGES"')"
echo "record names LIBNVVM_NVVM_VERSION: $(yn '"env":"LIBNVVM_NVVM_VERSION"')"
echo "record names CAN_FINALIZE_DEBUG: $(yn '"env":"CAN_FINALIZE_DEBUG"')"
