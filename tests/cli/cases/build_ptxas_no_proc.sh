# exit: 0
# expect: *built: 0*
# expect: *output named: -o */tmp/gpujit-ptxas-*/out.cubin*
# expect: *argv names /dev or /proc: 0*
# expect: *left in TMPDIR: none*
# Where /proc cannot name gpujit's own descriptor (here a tmpfs over it, in a mount namespace of
# its own), the lean pass's ptxas writes its cubin to a file in its private directory — still
# never /dev/stdout — and the directory goes with the build.
cuda=${CUDA_PATH:-/usr/local/cuda}
[ -x "$cuda/bin/ptxas" ] || { echo "skip: no ptxas in $cuda"; exit 77; }
unshare -m sh -c 'mount -t tmpfs none /proc' 2>/dev/null || { echo "skip: no mount namespace to hide /proc in"; exit 77; }
mkdir -p tk/bin tmp
for f in "$cuda"/*; do [ "$(basename "$f")" = bin ] || ln -s "$f" tk/; done
for f in "$cuda"/bin/*; do [ "$(basename "$f")" = ptxas ] || ln -s "$f" tk/bin/; done
printf '#!/bin/sh\necho "$*" >> "%s/argv.log"\nexec "%s/bin/ptxas" "$@"\n' "$PWD" "$cuda" > tk/bin/ptxas
chmod +x tk/bin/ptxas
export CUDA_PATH=$PWD/tk TMPDIR=$PWD/tmp
# A sanitized gpujit's LeakSanitizer reads /proc at exit, which this case hides on purpose
if ldd "$GPUJIT" 2>/dev/null | grep -q libasan; then echo "skip: a sanitized build's LeakSanitizer needs /proc, hidden here"; exit 77; fi
unshare -m sh -c "mount -t tmpfs none /proc && exec $GPUJIT build -q --no-cache --arch sm_90 -o a.cubin $EXAMPLES/saxpy.cu"
echo "built: $?"
echo "output named: $(grep -o -- '-o [^ ]*' argv.log | head -1)"
echo "argv names /dev or /proc: $(grep -c -e /dev/ -e /proc/ argv.log)"
left=$(find tmp -mindepth 1 | tr '\n' ' ')
echo "left in TMPDIR: ${left:-none}"
