# exit: 0
# expect: *saxpy            sm_90 *saxpy*
# expect: *"module":*"saxpy"*
# expect: *== */examples/saxpy.cu ==*extern "C" __global__ void saxpy*
# expect: *checked 1 entry, 0 bad*
# expect: *removed 1 entry*
$GPUJIT build -q --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" || exit 1
key=$($GPUJIT cache --cache-dir c --json ls | sed -n 's/.*"key":[[:space:]]*"\([0-9a-f]*\)".*/\1/p')
$GPUJIT cache --cache-dir c ls || exit 2
$GPUJIT cache --cache-dir c show "${key:0:8}" || exit 3
$GPUJIT cache --cache-dir c source "$key" || exit 4
$GPUJIT cache --cache-dir c source "$key" --extract x >/dev/null && test -f "x$EXAMPLES/saxpy.cu" || exit 5
$GPUJIT cache --cache-dir c verify || exit 6
$GPUJIT cache --cache-dir c clear
