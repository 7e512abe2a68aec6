# exit: 0
# expect: *a: out/a.cubin  compile * ms  worker *  pch none*
# expect: *2 modules: 0 hits, 2 built, 0 failed in * s on 2 workers*
# expect: *a: out/a.cubin  hit*sub/b: out/sub/b.cubin  hit*2 modules: 2 hits, 0 built, 0 failed*on 0 workers*
mkdir -p p/sub
printf 'extern "C" __global__ void a(float *x) { x[0] = 1; }\n' > p/a.cu
printf 'extern "C" __global__ void b(float *x) { x[0] = 2; }\n' > p/sub/b.cu
$GPUJIT build --arch sm_90 --cache-dir c -j 2 p --out-dir out || exit 1
$GPUJIT build --arch sm_90 --cache-dir c -j 2 p --out-dir out || exit 1
test -s out/a.cubin && test -s out/sub/b.cubin
