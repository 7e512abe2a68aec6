# exit: 5
# expect: *error: */malformed.json: not valid JSON*
$GPUJIT trace diff "$EXAMPLES/../tests/data/malformed.json" "$EXAMPLES/../tests/data/gpujit_small.json"
