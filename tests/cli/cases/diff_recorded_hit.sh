# exit: 0
# expect: *1 cache hit counted with the compile profile recorded*
# expect: *compile-time diff: pass*
# expect: *new            1 trace, 1 module build (1 recorded)*
# expect: *same*block_reduce*
# expect: *"result":*"pass"*
# expect: *### Compile time: pass*
# expect: *| same | *`block_reduce` |*
# A traced cache hit carries the profile its entry recorded: analysis and diff see the compile.
$GPUJIT build -q --time-trace=miss.json -o a.cubin "$EXAMPLES/block_reduce.cu" || exit 1
$GPUJIT build -q --time-trace=hit.json -o a.cubin "$EXAMPLES/block_reduce.cu" || exit 1
$GPUJIT trace analyze --top 3 hit.json | head -3
$GPUJIT trace diff --fail-above 5 miss.json hit.json || exit 1
$GPUJIT trace diff --json --fail-above 5 miss.json hit.json || exit 1
$GPUJIT trace diff --markdown --fail-above 5 miss.json hit.json
