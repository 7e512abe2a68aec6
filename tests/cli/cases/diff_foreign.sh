# exit: 5
# expect: *error: the base traces hold no compile*
$GPUJIT build -q --no-cache --time-trace=t.json "$EXAMPLES/saxpy.cu" || exit 1
$GPUJIT trace diff "$EXAMPLES/../tests/data/foreign_trace.json" t.json
