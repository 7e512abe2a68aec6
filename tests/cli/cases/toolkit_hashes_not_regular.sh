# exit: 0
# expect: *fifo: 0 still a fifo*
# expect: *link: 0 target untouched, link kept*
# The remembered toolkit hashes are only ever a regular file of gpujit's: a FIFO in their place
# (which an append would wait on for ever) or a link (whose target lines were appended to) is
# left as it is, and builds go on, hashing the toolkit anew (timeout: a hang fails the case).
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
mkfifo fifo
GPUJIT_TOOLKIT_HASHES=$PWD/fifo timeout 60 $GPUJIT build --arch sm_90 -q --cache-dir c1 k.cu -o k.cubin; r=$?
echo "fifo: $r $( [ -p fifo ] && echo still a fifo)"
echo precious > target; ln -s target link
GPUJIT_TOOLKIT_HASHES=$PWD/link timeout 60 $GPUJIT build --arch sm_90 -q --cache-dir c2 k.cu -o k.cubin; r=$?
echo "link: $r $( [ "$(cat target)" = precious ] && echo target untouched), $( [ -L link ] && echo link kept)"
