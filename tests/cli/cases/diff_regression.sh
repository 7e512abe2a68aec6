# exit: 8
# expect: *compile-time diff: FAIL*
# expect: *slower*saxpy  <- regression*
# expect: *added*cub/block/block_reduce.cuh*
# expect: *confidence     low*
# Adding a heavy include to a module fails the gate (exit 8), and the header is named.
cp "$EXAMPLES/saxpy.cu" saxpy.cu
$GPUJIT build -q --no-cache --time-trace=base.json saxpy.cu || exit 1
{ echo '#include <cub/block/block_reduce.cuh>'; cat "$EXAMPLES/saxpy.cu"; } > saxpy.cu
$GPUJIT build -q --no-cache --time-trace=new.json saxpy.cu || exit 1
$GPUJIT trace diff --fail-above 25 --min-ms 100 base.json new.json
