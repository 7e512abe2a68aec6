# exit: 0
# expect: *warning: -j 100000: * workers at most here (twice the * CPUs this process may use*
# expect: *bounded to twice the CPUs: yes*
# expect: *1 module: 0 hits, 1 built, 0 failed*
# expect: *-j 1: no warning*
# expect: *-j 0: 2 *invalid job count '0'*
# `-j N` is taken as make and ninja take it, but bounded by the machine: more workers than twice
# the CPUs this process may use (as nproc counts them) would only wait, each holding an NVRTC.
mkdir p && cp "$EXAMPLES/saxpy.cu" p/
"$GPUJIT" build --arch sm_90 --no-cache -j 100000 p >out.txt 2>err.txt
cat out.txt err.txt
most=$(( 2 * $(nproc) ))
grep -q -- "-j 100000: $most workers at most here (twice the $(nproc) CPUs" err.txt && echo "bounded to twice the CPUs: yes"
"$GPUJIT" build --arch sm_90 --no-cache -j 1 p 2>&1 | grep -q warning || echo "-j 1: no warning"
"$GPUJIT" build --arch sm_90 --no-cache -j 0 p >/dev/null 2>e0.txt; echo "-j 0: $? $(cat e0.txt)"
true
