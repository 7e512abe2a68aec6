# exit: 0
# expect: *usage: gpujit server start|stop|status|run*
# expect: *rc=2*unknown server command 'frob'*
# expect: *rc=2*invalid --workers '0': expected 1..64*
# expect: *no gpujit server runs for this cache (builds compile in-process)*status rc=1*
# expect: *"format":*"gpujit-server-status",*"running":*false*status rc=1*
# expect: *no gpujit server was running*
# With no server: status says so and exits 1 (a script's test for a server), stop says so and
# succeeds; bad commands and values are refused.
"$GPUJIT" server; echo "rc=$?"
"$GPUJIT" server frob 2>&1; echo "rc=$?"
"$GPUJIT" server start --workers 0 2>&1; echo "rc=$?"
"$GPUJIT" server status --cache-dir "$PWD/c"; echo "status rc=$?"
"$GPUJIT" server status --json --cache-dir "$PWD/c"; echo "status rc=$?"
"$GPUJIT" server stop --cache-dir "$PWD/c"
