# exit: 3
# expect: *bad: error: compile failed: */p/bad.cu:1:*identifier "nope" is undefined*
# expect: *2 modules: 0 hits, 1 built, 1 failed*
# expect: *  failed: bad: compile failed:*
mkdir -p p
printf 'extern "C" __global__ void a(float *x) { x[0] = 1; }\n' > p/a.cu
printf 'extern "C" __global__ void b(float *x) { x[0] = nope; }\n' > p/bad.cu
$GPUJIT build --arch sm_90 --no-cache -j 2 p
