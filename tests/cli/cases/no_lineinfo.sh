# exit: 1
$GPUJIT build -q --arch sm_90 --no-lineinfo "$EXAMPLES/saxpy.cu" || exit 7
readelf -SW saxpy.cubin | grep -q 'debug_line'
