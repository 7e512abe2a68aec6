# exit: 2
# expect: *argument 'buf:f32:zero': element count*
$GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" --grid 1 --block 1 --arg buf:f32:zero
