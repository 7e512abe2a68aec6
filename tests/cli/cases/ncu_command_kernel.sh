# exit: 0
# expect: *ncu --set full --import-source yes --kernel-name-base mangled -k vec_mul -c 1 -o vecops-vec_mul *--kernel vec_mul --grid 1 --block 32*
# reject: *-k vec_add*
# reject: *-k vec_fill*
# --kernel K of a module with three kernels: the command profiles K, the kernel it launches.
$GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/vecops.cu" --kernel vec_mul --grid 1 --block 32 \
  --arg i32:32 --arg buf:f32:32 --arg buf:f32:32 --arg buf:f32:32 --ncu-command
