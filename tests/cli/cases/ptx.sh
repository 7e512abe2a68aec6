# exit: 0
# expect: *saxpy.ptx  compute_90*
# expect: *.entry saxpy(*
$GPUJIT build --arch compute_90 "$EXAMPLES/saxpy.cu" && grep '.entry' saxpy.ptx
