# exit: 0
# expect: *of another build of gpujit or toolkit: builds do not use it*
# expect: *server: stale server: it is *: building in-process*
# expect: *k: k.cubin  sm_90  1 kernel*miss*
# expect: *a gpujit server of another build or toolkit runs for this cache: replacing it*
# expect: *compatible: True*
# A server of another build (here: a copy of gpujit elsewhere) never serves this one: builds go
# in-process with one line under -v, status says so, and start replaces it.
c="$PWD/c"
mkdir -p old && cp "$GPUJIT" old/gpujit && cp "$(dirname "$GPUJIT")/gpujit-worker" old/
old/gpujit server start -q --cache-dir "$c"
"$GPUJIT" server status --cache-dir "$c" | head -1
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' >k.cu
"$GPUJIT" build -v --arch sm_90 --cache-dir "$c" k.cu 2>&1 | grep -v "^ptxas\|^    0 bytes"
"$GPUJIT" server start --cache-dir "$c"
echo "compatible: $("$GPUJIT" server status --json --cache-dir "$c" | python3 -c 'import json,sys; print(json.load(sys.stdin)["compatible"])')"
"$GPUJIT" server stop -q --cache-dir "$c"
