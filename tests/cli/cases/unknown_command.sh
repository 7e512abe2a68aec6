# exit: 2
# expect: *unknown command 'frob'*
$GPUJIT frob
