# exit: 0
# expect: *600 variables: ptxas compiles 1*
# A child started with an environment of its own of more than 512 variables, without gpujit's
# (env -i VAR=... cmd), gets them put back all the same: its compiles are recorded.
# (ptxas as the child: the profiled program must not be gpujit itself, which a sanitizer build
# cannot have the injection library preloaded into.)
cuda=${CUDA_PATH:-/usr/local/cuda}
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
$GPUJIT build -q --ptx --arch sm_90 -o k.ptx k.cu || exit 1
vars=$(for i in $(seq 600); do printf 'V%d=1 ' "$i"; done)
$GPUJIT profile -q --json p.json -- sh -c "env -i $vars $cuda/bin/ptxas -arch=sm_90 $PWD/k.ptx -o $PWD/k.cubin" || echo "profile failed: $?"
python3 -c 'import json; p = json.load(open("p.json")); print("600 variables: ptxas compiles", sum(1 for c in p["compiles"] if c["kind"] == "ptxas"))'
