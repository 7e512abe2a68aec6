# exit: 0
# expect: *plain: saxpy: s.cubin  sm_90  1 kernel*miss*kernel saxpy*end plain*
# expect: *verbose: *lean PTX * module-scope variables removed*end verbose*
# expect: *no ptxas, first: *warning: lean modules need the toolkit's ptxas*said once for this cache*end first*
# expect: *no ptxas, second:  end second*
# expect: *no ptxas, new cache: *warning: lean modules need the toolkit's ptxas*end new*
# reject: *plain:*lean PTX*end plain*
# Quiet by default: a build prints its line and kernels; what the lean pass did is for -v. A toolkit
# without ptxas (NVIDIA's pip wheels without nvidia-cuda-nvcc) is said once per cache — a note in
# the cache remembers it — not on every build.
cp "$EXAMPLES/saxpy.cu" .
echo "plain: $("$GPUJIT" build --arch sm_90 -o s.cubin saxpy.cu 2>&1) end plain"
echo "verbose: $("$GPUJIT" build -v --no-cache --arch sm_90 -o s.cubin saxpy.cu 2>&1) end verbose"
# a toolkit of links to the real one, less bin/ptxas
real=$(dirname "$(dirname "$("$GPUJIT" --version | sed -n 's/^ptxas //p')")")
mkdir tk tk/bin
for e in "$real"/*; do [ "$(basename "$e")" = bin ] || ln -s "$e" tk/; done
for e in "$real"/bin/*; do [ "$(basename "$e")" = ptxas ] || ln -s "$e" tk/bin/; done
printf 'extern "C" __global__ void a(float *x) { x[0] = 1; }\n' > a.cu
printf 'extern "C" __global__ void b(float *x) { x[0] = 2; }\n' > b.cu
echo "no ptxas, first: $(CUDA_PATH=$PWD/tk "$GPUJIT" build --cache-dir c1 --arch sm_90 -o a.cubin a.cu 2>&1 >/dev/null) end first"
echo "no ptxas, second: $(CUDA_PATH=$PWD/tk "$GPUJIT" build --cache-dir c1 --arch sm_90 -o b.cubin b.cu 2>&1 >/dev/null) end second"
echo "no ptxas, new cache: $(CUDA_PATH=$PWD/tk "$GPUJIT" build --cache-dir c2 --arch sm_90 -o b.cubin b.cu 2>&1 >/dev/null) end new"
