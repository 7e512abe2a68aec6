# exit: 0
# expect: *exit codes:*3  compile or link error*4  I/O error*
# expect: *usage: gpujit build*--no-lineinfo*
$GPUJIT --help && $GPUJIT build --help
