# exit: 0
# expect: *no command: 2*
# expect: *no command to run*
# expect: *unknown option: 2*
# expect: *missing: 127*
# expect: *command not found*
# expect: *bad count: 2*
# Bad command lines of gpujit profile: a clear error and a non-zero exit, nothing run.
$GPUJIT profile; echo "no command: $?"
$GPUJIT profile --bogus -- true; echo "unknown option: $?"
$GPUJIT profile -- gpujit-no-such-command-here; echo "missing: $?"
$GPUJIT profile --max-events zero -- true; echo "bad count: $?"
