# exit: 2
# expect: *kernel saxpy takes 4 arguments; 2 given*
$GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" --grid 1 --block 1 --arg i32:1 --arg f32:2
