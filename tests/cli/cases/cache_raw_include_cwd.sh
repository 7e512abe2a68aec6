# exit: 0
# expect: *-Iinc: 1 2 2*
# expect: *-I=inc: 1 2 2*
# expect: *--include-path=inc: 1 2 2*
# expect: *-I inc: 1 2 2*
# expect: *pre-include: 3 4*
# A relative directory or header in a raw NVRTC option is resolved by NVRTC against the working
# directory, in every spelling NVRTC accepts: from another directory with its own inc/h.h the
# build must use that header, never the first directory's cached build; an edit must miss.
mkdir -p d1/inc d2/inc
printf '#define V 1\n' > d1/inc/h.h
printf '#define V 2\n' > d2/inc/h.h
printf '#include "h.h"\nextern "C" __global__ void k(int *o) { *o = V; }\n' > k.cu
val() { grep -o 'mov.u32.*, [0-9]*;' "$1" | grep -o '[0-9]*;' | tr -d ';'; }
for form in -Iinc -I=inc --include-path=inc "-I inc"; do
  rm -rf "$GPUJIT_CACHE_DIR"
  (cd d1 && $GPUJIT build -q -Xnvrtc "$form" ../k.cu --ptx -o k.ptx) || echo "d1 failed"
  (cd d2 && $GPUJIT build -q -Xnvrtc "$form" ../k.cu --ptx -o k.ptx) || echo "d2 failed"
  a=$(val d1/k.ptx) b=$(val d2/k.ptx)
  printf '#define V 2\n' > d1/inc/h.h
  (cd d1 && $GPUJIT build -q -Xnvrtc "$form" ../k.cu --ptx -o k.ptx) || echo "d1 again failed"
  echo "$form: $a $b $(val d1/k.ptx)"
  printf '#define V 1\n' > d1/inc/h.h
done
# --pre-include names a header relative to the working directory too
printf 'extern "C" __global__ void k(int *o) { *o = V; }\n' > p.cu
printf '#define V 3\n' > d1/pre.h
printf '#define V 4\n' > d2/pre.h
(cd d1 && $GPUJIT build -q -Xnvrtc --pre-include=pre.h ../p.cu --ptx -o p.ptx)
(cd d2 && $GPUJIT build -q -Xnvrtc --pre-include=pre.h ../p.cu --ptx -o p.ptx)
echo "pre-include: $(val d1/p.ptx) $(val d2/p.ptx)"
