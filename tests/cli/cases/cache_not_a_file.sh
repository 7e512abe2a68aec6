# exit: 0
# expect: *before: miss hit 2*
# expect: *after: miss 1*
# With -I A -I B and a directory A/h.h, NVRTC takes B/h.h; once A/h.h becomes a header the
# next build must miss and take it.
mkdir -p A/h.h B
printf '#define V 2\n' > B/h.h
printf '#include <h.h>\nextern "C" __global__ void k(int *o) { *o = V; }\n' > k.cu
st() { $GPUJIT build -I A -I B k.cu --ptx -o k.ptx | head -1 | grep -o 'miss\|hit'; }
val() { grep -o 'mov.u32.*, [0-9]*;' k.ptx | grep -o '[0-9]*;' | tr -d ';'; }
echo "before: $(st) $(st) $(val)"
rmdir A/h.h
printf '#define V 1\n' > A/h.h
echo "after: $(st) $(val)"
