# exit: 4
# expect: gpujit: error: adir: no .cu files beneath it
mkdir adir
$GPUJIT build adir
