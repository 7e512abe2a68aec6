# exit: 0
# expect: saxpy: out/saxpy.cubin  sm_90  1 kernel  *compile * ms*
# expect: *kernel saxpy*
# expect: *trace out/saxpy.trace.json*
mkdir out
$GPUJIT build --arch sm_90 --time-trace -o out/saxpy.cubin "$EXAMPLES/saxpy.cu" || exit 1
test -s out/saxpy.trace.json || exit 9
readelf -SW out/saxpy.cubin | grep -q '\.nv_debug_line_sass' || exit 8
