# exit: 0
# expect: *loop first: *miss*
# expect: *loop again: *hit*
# expect: *loop record: *"errno":40*
# expect: *loop made a header: *miss*
# expect: *loop made a header, value: V=2*
# expect: *chain first: *miss*
# expect: *chain again: *hit*
# reject: *not cached*
# Every answer NVRTC can get is a recordable answer: a searched path that is a symbolic link loop
# (ELOOP) or a chain of links too long to follow is recorded with its error and replayed like an
# absence, so the build is cached — and misses when the path starts to answer otherwise.
mkdir loop real
ln -s h.h loop/h.h
printf '#define V 1\n' > real/h.h
printf '#include "h.h"\nextern "C" __global__ void k(int *x) { x[0] = V; }\n' > k.cu
b() { "$GPUJIT" build -v --cache-dir c --arch sm_90 -o k.cubin "$@" k.cu 2>&1 | grep -oE 'not cached[^|]*|cache miss[^|]*| hit [0-9.]+ ms' | head -1; }
echo "loop first: $(b -I loop -I real)"
echo "loop again: $(b -I loop -I real)"
echo "loop record: $(grep -rhao '"error":"[^"]*loop/h.h","errno":[0-9]*' c/manifests | head -1)"
rm loop/h.h && printf '#define V 2\n' > loop/h.h
echo "loop made a header: $(b -I loop -I real)"
"$GPUJIT" build --cache-dir c --arch compute_90 -o k.ptx -I loop -I real k.cu
echo "loop made a header, value: V=$(grep -oE 'mov.u32[^;]*, [0-9]+' k.ptx | grep -oE '[0-9]+$')"
# a loop of links to links: ELOOP at the 41st
mkdir chain
for i in $(seq 0 45); do ln -s "l$((i + 1))" "chain/l$i"; done
ln -s l0 chain/h.h
echo "chain first: $(b -I chain -I real)"
echo "chain again: $(b -I chain -I real)"
