# exit: 5
# expect: gpujit: error: */not_a_trace.json: not a trace*
$GPUJIT trace analyze "$EXAMPLES/../tests/data/not_a_trace.json"
