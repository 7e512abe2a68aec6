# exit: 0
# expect: *single: 3 gone*
# expect: *project first: kept*
# expect: *project: gone*
# A failed build leaves no output, as compilers do: the previous build's image at -o (or in a
# project's output directory) is removed, never left to look like this build's.
printf 'extern "C" __global__ void k(int *o) { *o = 1; }\n' > k.cu
$GPUJIT build -q k.cu --ptx -o k.ptx
printf 'extern "C" __global__ void k(int *o) { *o = undefined_name; }\n' > k.cu
$GPUJIT build -q k.cu --ptx -o k.ptx 2>/dev/null; rc=$?
echo "single: $rc $([ -e k.ptx ] && echo kept || echo gone)"
mkdir -p proj
printf 'extern "C" __global__ void p(int *o) { *o = 1; }\n' > proj/p.cu
$GPUJIT build -q --ptx proj --out-dir out >/dev/null 2>&1
echo "project first: $(ls out/*.ptx >/dev/null 2>&1 && echo kept || echo gone)"
printf 'extern "C" __global__ void p(int *o) { *o = nope; }\n' > proj/p.cu
$GPUJIT build -q --ptx proj --out-dir out >/dev/null 2>&1
echo "project: $(ls out/*.ptx >/dev/null 2>&1 && echo kept || echo gone)"
