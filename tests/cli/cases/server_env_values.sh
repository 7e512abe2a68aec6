# exit: 0
# expect: *warned: 1 time*GPUJIT_SERVER='yes' is not 0 or 1: ignored*
# expect: *built: 0*
# expect: *GPUJIT_SERVER=2 with the cache's setting: a server started on demand*
# expect: *GPUJIT_SERVER=0 with the cache's setting: no server*
# reject: *no server started*
# GPUJIT_SERVER is read one way by every reader: a value other than 0 or 1 is said once and
# ignored — the cache's start-on-demand setting holds, as with the variable unset (it was taken
# as "use a server" by one reader and "never start one" by the other).
c="$PWD/c"
printf 'extern "C" __global__ void k(float *x) { x[0] *= 2.0f; }\n' >k.cu
GPUJIT_SERVER=yes "$GPUJIT" build --arch sm_90 --cache-dir "$c" --no-pch -o k.cubin k.cu 2>err.txt
echo "built: $?"
echo "warned: $(grep -c "GPUJIT_SERVER='yes' is not 0 or 1: ignored" err.txt) time"; cat err.txt
started() { for _ in $(seq 100); do "$GPUJIT" server status --cache-dir "$c" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }
# the setting, with no server running
"$GPUJIT" server start --auto --cache-dir "$c" --workers 1 >/dev/null && "$GPUJIT" server stop --cache-dir "$c" >/dev/null
printf 'extern "C" __global__ void k(float *x) { x[0] *= 3.0f; }\n' >k.cu
GPUJIT_SERVER=0 "$GPUJIT" build -q --arch sm_90 --cache-dir "$c" --no-pch -o k.cubin k.cu 2>/dev/null
sleep 0.5
if "$GPUJIT" server status --cache-dir "$c" >/dev/null 2>&1; then echo "GPUJIT_SERVER=0 started a server"; else echo "GPUJIT_SERVER=0 with the cache's setting: no server"; fi
printf 'extern "C" __global__ void k(float *x) { x[0] *= 4.0f; }\n' >k.cu
GPUJIT_SERVER=2 "$GPUJIT" build -q --arch sm_90 --cache-dir "$c" --no-pch -o k.cubin k.cu 2>/dev/null
if started; then echo "GPUJIT_SERVER=2 with the cache's setting: a server started on demand"; else echo "no server started"; fi
"$GPUJIT" server stop --auto --cache-dir "$c" >/dev/null 2>&1
exit 0
