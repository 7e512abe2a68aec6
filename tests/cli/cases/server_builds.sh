# exit: 0
# expect: *gpujit server started (pid *
# expect: *first: built created*
# expect: *second: built used*
# expect: *first: same cubin as --no-pch*
# expect: *same cubin as in-process*
# expect: *same diagnostics and exit code 3*
# expect: *2 modules: 0 hits, 2 built, 0 failed in * on the build server (compile*
# expect: *same project outputs*
# expect: *PCH * 1 hits  #include <cuda/std/type_traits>*
# expect: *gpujit server stopped*
# reject: *differ*
# The server's builds are the in-process builds: bytes, diagnostics, exit codes, for modules
# and for a project's misses; its PCH is reused across two CLI calls, as --json shows.
c="$PWD/c"
"$GPUJIT" server start --cache-dir "$c" --workers 1
printf '#include <cuda/std/type_traits>\nextern "C" __global__ void k(float *x) { x[0] *= 2.0f; }\n' >k.cu
j() { python3 -c 'import json,sys; m=json.load(sys.stdin)["modules"][0]; print(m["status"], m["pch"])'; }
echo "first: $("$GPUJIT" build --json --arch sm_90 --cache-dir "$c" -o k1.cubin k.cu | j)"
# a PCH never changes what a module compiles to: each is the module built without one
GPUJIT_SERVER=0 "$GPUJIT" build -q --arch sm_90 --no-cache --no-pch -o k1.local.cubin k.cu
cmp k1.cubin k1.local.cubin && echo "first: same cubin as --no-pch" || echo "first: cubins differ"
printf '#include <cuda/std/type_traits>\nextern "C" __global__ void k(float *x) { x[1] *= 3.0f; }\n' >k.cu
echo "second: $("$GPUJIT" build --json --arch sm_90 --cache-dir "$c" -o k2.cubin k.cu | j)"
GPUJIT_SERVER=0 "$GPUJIT" build -q --arch sm_90 --no-cache --no-pch -o k2.local.cubin k.cu
cmp k2.cubin k2.local.cubin && echo "same cubin as in-process" || echo "cubins differ"
printf 'extern "C" __global__ void bad(float *x) {\n  x[0] = nope;\n}\n' >bad.cu
"$GPUJIT" build --arch sm_90 --cache-dir "$c" bad.cu >server.out 2>&1; a=$?
GPUJIT_SERVER=0 "$GPUJIT" build --arch sm_90 --no-cache bad.cu >local.out 2>&1; b=$?
[ $a = $b ] && cmp -s server.out local.out && echo "same diagnostics and exit code $a" || { echo "diagnostics differ ($a, $b)"; cat server.out local.out; }
mkdir -p proj && cp k.cu proj/a.cu && printf 'extern "C" __global__ void b(int *p) { p[0] = 7; }\n' >proj/b.cu
"$GPUJIT" build -j 1 --arch sm_90 --cache-dir "$c" --out-dir out1 proj | grep modules
GPUJIT_SERVER=0 "$GPUJIT" build -q --arch sm_90 --no-cache --out-dir out2 proj
cmp out1/a.cubin out2/a.cubin && cmp out1/b.cubin out2/b.cubin && echo "same project outputs" || echo "project outputs differ"
"$GPUJIT" server status --cache-dir "$c"
"$GPUJIT" server stop --cache-dir "$c"
