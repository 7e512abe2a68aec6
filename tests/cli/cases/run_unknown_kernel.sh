# exit: 2
# expect: *unknown kernel 'vec_sub'; the module has:*vec_add*
$GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/vecops.cu" --kernel vec_sub --grid 1 --block 1
