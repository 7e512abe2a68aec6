# exit: 0
# expect: *gpujit: error: no CUDA toolkit at CUDA_PATH=/opt/nope*set CUDA_PATH to a toolkit root*pip install 'gpujit?cu13?'*CUDA_PATH build: rc=9*
# expect: *no CUDA toolkit at CUDA_HOME=/opt/nope*set CUDA_HOME*CUDA_HOME build: rc=9*
# expect: *GPUJIT_NVRTC_LIBRARY=/opt/nope/libnvrtc.so.13 cannot be loaded*override build: rc=9*
# expect: *version without: rc=0*gpujit 0.1.0*toolkit none found: no CUDA toolkit at CUDA_PATH=/opt/nope*NVRTC none*cache */vcache (GPUJIT_CACHE_DIR)*
# expect: *version with: rc=0*toolkit /*NVRTC 1*.* (/*libnvrtc.so.1*)*nvJitLink 1*cache *
# expect: *env CUDA_PATH: CUDA_PATH * /opt/nope  (environment)*
# expect: *env problem: no toolkit: no CUDA toolkit at CUDA_PATH=/opt/nope*
# expect: *help: *9  no CUDA toolkit*
# expect: *nothing written: True*
# reject: *ptxas*not there*
# reject: *internal*
# A toolkit root the user named that holds no toolkit is an error of its own (exit 9) naming the
# variable and the fix, never a fall back to another NVRTC the loader would find (this machine's
# ld.so.cache names the system toolkit's); --version works without a toolkit and says so.
cp "$EXAMPLES/saxpy.cu" .
CUDA_PATH=/opt/nope "$GPUJIT" build --arch sm_90 -o s.cubin saxpy.cu 2>&1; echo "CUDA_PATH build: rc=$?"
env -u CUDA_PATH CUDA_HOME=/opt/nope "$GPUJIT" build --arch sm_90 -o s.cubin saxpy.cu 2>&1; echo "CUDA_HOME build: rc=$?"
GPUJIT_NVRTC_LIBRARY=/opt/nope/libnvrtc.so.13 "$GPUJIT" build --arch sm_90 -o s.cubin saxpy.cu 2>&1; echo "override build: rc=$?"
echo "nothing written: $([ ! -e s.cubin ] && echo True || echo False)"
out=$(CUDA_PATH=/opt/nope GPUJIT_CACHE_DIR=$PWD/vcache "$GPUJIT" --version 2>&1); echo "version without: rc=$?"; echo "$out"
out=$("$GPUJIT" --version 2>&1); echo "version with: rc=$?"; echo "$out"
echo "env CUDA_PATH: $(CUDA_PATH=/opt/nope "$GPUJIT" env | grep '^CUDA_PATH')"
echo "env problem: $(CUDA_PATH=/opt/nope "$GPUJIT" env | grep '^no toolkit')"
echo "help: $("$GPUJIT" --help | grep '^  9 ')"
