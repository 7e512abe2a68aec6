# exit: 0
# expect: *uncached*
# reject: *miss*
GPUJIT_NO_CACHE=1 $GPUJIT build --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" && test ! -d c/entries
