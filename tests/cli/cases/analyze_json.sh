# exit: 0
# expect: *"format":*"gpujit-trace-analysis",*
# expect: *"tables":*"templates":*"foo<$>"*
# expect: *keys as Python's: True*
# trace analyze --json gives what gpujit.trace.analyze() gives: the same keys, rows in milliseconds
# under "tables".
$GPUJIT trace analyze --json "$EXAMPLES/../tests/data/gpujit_small.json" | tee a.json
echo "keys as Python's: $(python3 -c 'import json; d=json.load(open("a.json")); r=d["tables"]["phases"][0]; print(sorted(d)[:6] == ["events", "files", "format", "recorded", "tables", "unmeasured"] and sorted(r) == ["count", "max_ms", "name", "total_ms"])')"
