# exit: 0
# expect: *first: cache miss*
# expect: *again:  hit *
# expect: *programs recorded: 2*
# expect: *a link of the other program's header made a copy:  hit *
# expect: *made one file again:  hit *
# expect: *one program's two headers no longer one file: cache miss*
# The sources of an LTO module are separate programs: `#pragma once` compares the headers of one
# program, never those of two. Two headers that are hard links, each included by one source,
# still hit when they become copies (and links again); in one program, they are compared.
printf '#pragma once\n#define SCALE 2.0f\n' > x.h
ln x.h y.h
printf '#include "x.h"\nextern __device__ float two(float);\nextern "C" __global__ void k(float *v) { v[0] = two(v[0]) * SCALE; }\n' > a.cu
printf '#include "y.h"\n__device__ float two(float v) { return SCALE * v; }\n' > b.cu
b() { "$GPUJIT" build -v --cache-dir c --arch sm_90 -o ab.cubin a.cu b.cu 2>&1 | grep -oE 'cache miss[^|]*| hit [0-9.]+ ms' | head -1; }
copy() { cp "$1" t.h && mv t.h "$1"; }
echo "first: $(b)"
echo "again: $(b)"
echo "programs recorded: $(grep -rhoE '"programs":[0-9]+' c/manifests | sort -u | wc -l)"
copy y.h
echo "a link of the other program's header made a copy: $(b)"
rm y.h && ln x.h y.h
echo "made one file again: $(b)"
# one program reading both: as links, y.h is skipped; as copies, it is read again
printf '#include "x.h"\n#include "y.h"\n__device__ float two(float v) { return SCALE * v; }\n' > b.cu
b >/dev/null
copy y.h
echo "one program's two headers no longer one file: $(b)"
