# exit: 5
# expect: gpujit: error: junk.cu: binary file*
head -c 4096 /dev/urandom > junk.cu
$GPUJIT build junk.cu
