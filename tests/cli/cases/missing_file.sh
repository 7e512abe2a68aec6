# exit: 4
# expect: gpujit: error: nope.cu: No such file or directory
$GPUJIT build nope.cu
