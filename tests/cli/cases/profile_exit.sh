# exit: 0
# expect: *status 7*
# expect: *exit 7, wall * ms*
# expect: *signal: 143*
# expect: *ended by signal 15*
# expect: *json exit_status 7*
# The profiled command's exit status passes through, a signal's as 128 + N, and the report
# says how it ended.
$GPUJIT profile --json p.json -- sh -c 'exit 7'; echo "status $?"
python3 -c 'import json; print("json exit_status", json.load(open("p.json"))["totals"]["exit_status"])'
$GPUJIT profile -- sh -c 'kill -TERM $$'; echo "signal: $?"
