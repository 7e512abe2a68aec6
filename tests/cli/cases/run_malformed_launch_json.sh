# exit: 5
# expect: *plan.json: not valid JSON*
echo '{"launches":[' > plan.json
$GPUJIT run --arch sm_90 --cache-dir c "$EXAMPLES/saxpy.cu" --launch plan.json
