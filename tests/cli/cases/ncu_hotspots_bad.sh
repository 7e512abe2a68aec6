# exit: 5
# expect: gpujit: error: */gpujit_small.json: not ncu --page source CSV*
$GPUJIT ncu hotspots "$EXAMPLES/../tests/data/gpujit_small.json"
