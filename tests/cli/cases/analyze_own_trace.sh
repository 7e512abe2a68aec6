# exit: 0
# expect: *front end*
# expect: *modules (1)*block_reduce*
# expect: *cub/block/block_reduce.cuh*
$GPUJIT build -q --arch sm_90 --time-trace=t.json "$EXAMPLES/block_reduce.cu" || exit 1
$GPUJIT trace analyze t.json
