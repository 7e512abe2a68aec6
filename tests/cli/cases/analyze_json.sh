# exit: 0
# expect: *"templates":*"foo<$>"*
$GPUJIT trace analyze --json "$EXAMPLES/../tests/data/gpujit_small.json"
