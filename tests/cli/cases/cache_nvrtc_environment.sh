# exit: 0
# expect: *plain: *miss*
# expect: *again: *hit*
# expect: *wiz set: *miss*NVRTCWIZ*
# expect: *wiz again: *hit*
# expect: *append flags changed: *miss*NVRTC_APPEND_FLAGS*
# expect: *unset again: *hit*
# expect: *other variable: *hit*
# expect: *PWD elsewhere: *hit*
# expect: *record names NVRTC_APPEND_FLAGS: yes*
# expect: *record names NVRTC_DISABLE_PCH: yes*
# expect: *record holds no value: yes*
# expect: *record names PWD: no*
# expect: *other builtins: *miss*LD_LIBRARY_PATH*
# expect: *other builtins again: *hit*
# expect: *builtins recorded: 1*
# What NVRTC reads of the environment is part of the record: each variable it reads
# (NVRTCWIZ, NVRTC_APPEND_FLAGS, those it reads when loaded), set or not, is replayed on lookup.
# A change misses and says which; an unrelated variable, or PWD (NVRTC's paths come from getcwd),
# still hits. The record keeps a value's hash, never the value.
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
b() { "$GPUJIT" build -v --cache-dir c --arch sm_90 -o k.cubin k.cu 2>&1 | grep -oE 'cache miss[^|]*| hit [0-9.]+ ms' | head -1; }
unset NVRTCWIZ NVRTC_APPEND_FLAGS
echo "plain: $(b)"
echo "again: $(b)"
echo "wiz set: $(NVRTCWIZ=1 b) $(NVRTCWIZ=1 "$GPUJIT" build -v --cache-dir c --arch sm_90 -o k.cubin k.cu 2>&1 | grep -o NVRTCWIZ | head -1)"
NVRTCWIZ=1 b > /dev/null
echo "wiz again: $(NVRTCWIZ=1 b)"
NVRTC_APPEND_FLAGS=-DSECRET_VALUE_42 b >/dev/null
echo "append flags changed: $(NVRTC_APPEND_FLAGS=-DOTHER b) $(NVRTC_APPEND_FLAGS=-DOTHER2 "$GPUJIT" build -v --cache-dir c --arch sm_90 -o k.cubin k.cu 2>&1 | grep -o NVRTC_APPEND_FLAGS | head -1)"
echo "unset again: $(b)"
echo "other variable: $(SOME_OTHER_VARIABLE=1 b)"
echo "PWD elsewhere: $(PWD=/nowhere b)"
yn() { if grep -rqs "$1" c/manifests; then echo yes; else echo no; fi; }
echo "record names NVRTC_APPEND_FLAGS: $(yn '"env":"NVRTC_APPEND_FLAGS"')"
echo "record names NVRTC_DISABLE_PCH: $(yn '"env":"NVRTC_DISABLE_PCH"')"
echo "record holds no value: $(if grep -rqs SECRET_VALUE_42 c; then echo no; else echo yes; fi)"
echo "record names PWD: $(yn '"env":"PWD"')"
# The builtins library NVRTC maps by name: another one earlier on LD_LIBRARY_PATH is another build.
mkdir -p L && cp "${CUDA_PATH:-/usr/local/cuda}"/lib64/libnvrtc-builtins.alt.so.13.0 L/libnvrtc-builtins.so.13.0
echo "other builtins: $(LD_LIBRARY_PATH=$PWD/L b)"
echo "other builtins again: $(LD_LIBRARY_PATH=$PWD/L b)"
echo "builtins recorded: $(grep -rlas "$PWD/L/libnvrtc-builtins.so.13.0" c/deps | wc -l)"
