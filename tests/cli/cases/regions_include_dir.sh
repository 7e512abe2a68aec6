# exit: 4
# expect: *regions.cuh present under /*
# expect: *gpujit's device headers (gpujit/regions.cuh) not found*set GPUJIT_INCLUDE_DIR*
# `gpujit --include-dir` names the directory to give nvcc or CuPy with -I; a GPUJIT_INCLUDE_DIR
# without the headers is an error, not a silent fallback.
d=$($GPUJIT --include-dir) && [ -f "$d/gpujit/regions.cuh" ] && echo "regions.cuh present under $d"
GPUJIT_INCLUDE_DIR=/nonexistent $GPUJIT --include-dir
