# exit: 0
# expect: 1 trace, 14 events*
# expect: *phases (6)*
# expect: *0.300*0.300*1  front end*
# expect: *headers (2)*h1.h*
$GPUJIT trace analyze --top 3 "$EXAMPLES/../tests/data/gpujit_small.json"
