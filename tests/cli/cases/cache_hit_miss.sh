# exit: 0
# expect: saxpy: saxpy.cubin  sm_90  1 kernel  *  miss*saxpy: saxpy.cubin  sm_90  1 kernel  *  hit * ms (saved * ms)*
# expect: *entries   1*hits      1*misses    1*
$GPUJIT build --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" || exit 1
$GPUJIT build --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" || exit 1
$GPUJIT cache --cache-dir c stats
