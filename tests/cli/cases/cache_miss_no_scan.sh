# exit: 0
# expect: *miss: stages scan=0 store=1*
# expect: *fifo header: 4 *h.h: is a FIFO, where NVRTC would read a header*
# A cache miss compiles at once: no include scan first (the record is what NVRTC is seen to read,
# and the observing wrappers refuse a FIFO header themselves), the entry stored after.
printf '#include "h.h"\nextern "C" __global__ void k(int *o) { o[0] = V; }\n' > k.cu
printf '#define V 1\n' > h.h
$GPUJIT build -q --arch sm_90 --time-trace=t.json -o k.cubin k.cu || exit 1
echo "miss: stages scan=$(grep -o '"name": *"scan includes"' t.json | wc -l) store=$(grep -o '"name": *"cache store"' t.json | wc -l)"
rm h.h && mkfifo h.h
out=$(timeout 60 $GPUJIT build -q --arch sm_90 -D X=2 -o k2.cubin k.cu 2>&1); rc=$?
echo "fifo header: $rc $out"
