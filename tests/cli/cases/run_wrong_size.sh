# exit: 2
# expect: *kernel saxpy argument 2 is 4 bytes; the spec gives 8*
$GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" --grid 1 --block 1 --arg i32:1 --arg f64:2 --arg buf:f32:1 --arg buf:f32:1
