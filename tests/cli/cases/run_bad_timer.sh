# exit: 2
# expect: *invalid --timer 'nvprof' (events, cupti or cupti-concurrent)*
$GPUJIT run --arch sm_90 "$EXAMPLES/saxpy.cu" --grid 1 --block 1 --arg i32:1 --arg f32:1 --arg buf:f32:1 --arg buf:f32:1 --timer nvprof
