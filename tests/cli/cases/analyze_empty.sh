# exit: 0
# expect: 1 trace, 0 events*
$GPUJIT trace analyze "$EXAMPLES/../tests/data/empty.json"
