# exit: 2
# expect: gpujit: build: give directories or files, not both*
mkdir -p p
printf 'extern "C" __global__ void a(float *x) { x[0] = 1; }\n' > p/a.cu
$GPUJIT build p p/a.cu
