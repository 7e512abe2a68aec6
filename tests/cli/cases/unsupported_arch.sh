# exit: 2
# expect: *invalid --arch 'sm_999': this NVRTC does not support arch 999*
$GPUJIT build --arch sm_999 "$EXAMPLES/saxpy.cu"
