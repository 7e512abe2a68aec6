# exit: 5
# expect: gpujit: error: */malformed.json: not valid JSON*
$GPUJIT trace analyze "$EXAMPLES/../tests/data/malformed.json"
