# exit: 0
# expect: *one file: linked*
# expect: *two files, one with GPUJIT_REGIONS_EXTERN: linked*
# A program built with nvcc and the header, regions on, links: the state is defined where nvcc
# registers it on the host too (written as `extern "C"` with an initializer, nvcc registered a host
# symbol it never defined: "undefined reference to `gpujit_regions'"). The two-file form, with
# relocatable device code, defines it once.
nvcc=${CUDA_PATH:-/usr/local/cuda}/bin/nvcc
inc=$($GPUJIT --include-dir) || exit 1
cat >a.cu <<'CU'
#include <gpujit/regions.cuh>
__global__ void k(float *x) { GPUJIT_REGION("a") { x[threadIdx.x] += 1.0f; } }
void other(float *x);
int main(int argc, char **argv) { if (argc > 5) { k<<<1, 32>>>(nullptr); other(nullptr); } return 0; }
CU
cat >b.cu <<'CU'
#define GPUJIT_REGIONS_EXTERN
#include <gpujit/regions.cuh>
__global__ void k2(float *x) { GPUJIT_REGION("b") { x[threadIdx.x] *= 2.0f; } }
void other(float *x) { k2<<<1, 32>>>(x); }
CU
sed 's/^void other.*//; s/ other(nullptr);//' a.cu >one.cu
"$nvcc" -DGPUJIT_REGIONS -I"$inc" -arch=sm_90 -o one one.cu 2>&1 | grep -E "error|undefined" | head -3
[ -x one ] && echo "one file: linked"
"$nvcc" -rdc=true -DGPUJIT_REGIONS -I"$inc" -arch=sm_90 -o two a.cu b.cu 2>&1 | grep -E "error|undefined" | head -3
[ -x two ] && echo "two files, one with GPUJIT_REGIONS_EXTERN: linked"
exit 0
