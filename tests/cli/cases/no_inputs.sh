# exit: 2
# expect: *build: no input files*
$GPUJIT build --arch sm_90
