# exit: 5
# expect: *plan.json: launch 1 needs "kernel"*
echo '{"launches":[{"grid":[1],"block":[1]}]}' > plan.json
$GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" --launch plan.json
