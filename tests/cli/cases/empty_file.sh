# exit: 5
# expect: gpujit: error: empty.cu: empty file
: > empty.cu
$GPUJIT build empty.cu
