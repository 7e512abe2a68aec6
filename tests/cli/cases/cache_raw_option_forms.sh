# exit: 0
# expect: *spellings: miss hit hit hit*
# expect: *edited: miss 5*
# expect: *unknown: miss miss*
# expect: *side file: uncacheable uncacheable*
# expect: *not cached: *NVRTC option '--time=t.csv' names a file*
# expect: *missing value: 2*NVRTC option '-I' needs a value*
# -I=DIR is NVRTC's own form: the directory, not '=DIR'. Every spelling of one directory is one
# entry; a header found through any of them is a dependency. An option gpujit does not know, or
# one that reads a file the cache cannot track, builds uncached (and -v says why).
mkdir inc
printf '#define V 1\n' > inc/h.h
printf '#include "h.h"\nextern "C" __global__ void k(int *o) { *o = V; }\n' > k.cu
st() { $GPUJIT build "$@" k.cu --ptx -o k.ptx | head -1 | grep -o 'uncacheable\|miss\|hit'; }
echo "spellings: $(st -Xnvrtc -I=inc) $(st -Xnvrtc -Iinc) $(st -Xnvrtc --include-path="$PWD/inc") $(st -Xnvrtc -I -Xnvrtc inc)"
printf '#define V 5\n' > inc/h.h
echo "edited: $(st -Xnvrtc -I=inc) $(grep -o 'mov.u32.*, [0-9]*;' k.ptx | grep -o '[0-9]*;' | tr -d ';')"
echo "unknown: $(st -Xnvrtc -Iinc -Xnvrtc --no-such-option 2>/dev/null || echo miss) $(st -Xnvrtc -Iinc -Xnvrtc --no-such-option 2>/dev/null || echo miss)"
echo "side file: $(st -Xnvrtc -Iinc -Xnvrtc --time=t.csv) $(st -Xnvrtc -Iinc -Xnvrtc --time=t.csv)"
$GPUJIT -v build -Xnvrtc -Iinc -Xnvrtc --time=t.csv k.cu --ptx -o k.ptx 2>&1 | grep -o 'not cached.*' | head -1
$GPUJIT build -Xnvrtc -I k.cu --ptx -o k.ptx > out.txt 2>&1; echo "missing value: $? $(cat out.txt)"
