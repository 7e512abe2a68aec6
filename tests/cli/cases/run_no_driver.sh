# exit: 6
# expect: *module saxpy (sm_90)  cache miss*compile (NVRTC)*
# expect: *execution unavailable: CUDA driver*
# No driver on CI; on a GPU machine the stub library plays the part of a broken one.
export GPUJIT_LIBCUDA=/nonexistent/libcuda.so.1
$GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" --grid 4096 --block 256 --arg i32:1048576 --arg f32:2 --arg buf:f32:1048576:random --arg buf:f32:1048576:zeros
