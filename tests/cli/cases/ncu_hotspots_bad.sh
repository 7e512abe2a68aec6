# exit: 5
# expect: gpujit: error: */gpujit_small.json: not ncu's --page source CSV: make one with*
$GPUJIT ncu hotspots "$EXAMPLES/../tests/data/gpujit_small.json"
