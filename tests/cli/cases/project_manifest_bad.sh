# exit: 5
# expect: gpujit: error: m.json: module 1 (two): option "defines" must be an array of strings
printf 'extern "C" __global__ void a(float *x) { x[0] = 1; }\n' > a.cu
printf '{"modules": [{"name": "one", "files": ["a.cu"]}, {"name": "two", "files": ["a.cu"], "options": {"defines": "X=1"}}]}\n' > m.json
$GPUJIT build --arch sm_90 --modules m.json
