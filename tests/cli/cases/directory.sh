# exit: 4
# expect: gpujit: error: adir: is a directory, not a file
mkdir adir
$GPUJIT build adir
