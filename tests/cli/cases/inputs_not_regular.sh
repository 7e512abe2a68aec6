# exit: 0
# expect: *build /dev/zero: 4 *is a character device; gpujit reads regular files only*
# expect: *build fifo: 4 *is a FIFO; gpujit reads regular files only*
# expect: *analyze /dev/zero: 4 *is a character device*
# expect: *analyze fifo: 4 *is a FIFO*
# expect: *header fifo: 4 *h.h: is a FIFO, where NVRTC would read a header*
# expect: *header fifo, no cache: 4 *h.h: is a FIFO, where NVRTC would read a header*
# expect: *has_include fifo, no cache: 4 *g.h: is a FIFO, where NVRTC would read a header*
# Sources, headers and traces are read with a bound: a device or a FIFO with no writer is
# refused at once with its kind named (timeout 20 s: a hang fails the case), never read forever;
# a header that is a FIFO, which NVRTC would open and wait on, fails the build: cached builds
# scan for it; every compile's opens are observed, and NVRTC is not let open one.
mkfifo f.cu f.json
t() { out=$(timeout 20 "$@" 2>&1); echo "$? $out"; }
echo "build /dev/zero: $(t $GPUJIT build /dev/zero -o x.cubin)"
echo "build fifo: $(t $GPUJIT build f.cu -o x.cubin)"
echo "analyze /dev/zero: $(t $GPUJIT trace analyze /dev/zero)"
echo "analyze fifo: $(t $GPUJIT trace analyze f.json)"
mkfifo h.h
printf '#include "h.h"\nextern "C" __global__ void k() {}\n' > k.cu
echo "header fifo: $(t $GPUJIT build k.cu --ptx -o k.ptx)"
echo "header fifo, no cache: $(t $GPUJIT build --no-cache k.cu --ptx -o k.ptx)"
mkfifo g.h
printf '#if __has_include("g.h")\n#include "g.h"\n#endif\nextern "C" __global__ void k() {}\n' > g.cu
echo "has_include fifo, no cache: $(t $GPUJIT build --no-cache g.cu --ptx -o g.ptx)"
