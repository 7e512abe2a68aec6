# exit: 6
# expect: *on: 1 state, 4 names*
# expect: *off: 0 state, 0 names*
# expect: *execution unavailable: CUDA driver*
# #include <gpujit/regions.cuh> needs no -I; --regions switches the regions on (the state gpujit
# binds at load, the names the host reads back), without it they compile to nothing. `run
# --regions` without a driver still reports the compile half.
$GPUJIT build -q --no-cache --regions --arch compute_90 -o on.ptx "$EXAMPLES/phase_timing.cu" || exit 1
$GPUJIT build -q --no-cache --arch compute_90 -o off.ptx "$EXAMPLES/phase_timing.cu" || exit 1
for f in on off; do
  echo "$f: $(grep -c 'gpujit_regions\[56\]' $f.ptx) state, $(grep -c '^\.global .align 1 .b8 \$str' $f.ptx) names"
done
export GPUJIT_LIBCUDA=/nonexistent/libcuda.so.1
$GPUJIT run --regions --arch sm_90 --no-cache "$EXAMPLES/phase_timing.cu" --grid 8 --block 128 --arg i32:1024 \
  --arg i32:2 --arg buf:f32:1024:random --arg buf:f32:1024:zeros
