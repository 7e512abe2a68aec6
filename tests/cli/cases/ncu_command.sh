# exit: 0
# expect: *ncu --set full --import-source yes --kernel-name-base mangled -k _Z5scaleIfEviT_PS0_ -c 1 -o scale-_Z5scaleIfEviT_PS0_ */gpujit run --arch sm_90 --cache-dir c */scale.cu --name-expr 'scale<float>' --kernel 'scale<float>' --grid 1 --block 1 --arg i32:1 --arg f32:2 --arg buf:f32:1*
# reject: *--source-folders*
$GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/scale.cu" --name-expr 'scale<float>' --kernel 'scale<float>' --grid 1 --block 1 --arg i32:1 --arg f32:2 --arg buf:f32:1 --ncu-command
