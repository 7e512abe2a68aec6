# exit: 0
# expect: *cacheable: stored 1 entry, 255 of 255 module-scope variables removed*
# expect: *cacheable again: hit*
# expect: *probe error (ELOOP): 255 of 255 module-scope variables removed, the same size and bytes: yes*
# expect: *probe error (ELOOP) again: hit*
# expect: *probe error (ENAMETOOLONG): 255 of 255 module-scope variables removed, the same size and bytes: yes*
# expect: *too new: not cached: inc/h.h was modified while it was being compiled (too new to stand for its content)*
# expect: *too new: 255 of 255 module-scope variables removed, the same size and bytes: yes*
# expect: *no cache: 255 of 255 module-scope variables removed, the same size and bytes: yes*
# reject: *every variable kept*
# A build whose dependency record the cache refuses is the same build: the lean pass reads the
# user's headers whenever every file NVRTC read is known, whatever the cache decides. Each
# refused build (too new, no cache) is compared with the cacheable one, size and bytes; so are
# builds whose probes failed with ELOOP or ENAMETOOLONG, which are recorded (and hit) now.
mkdir -p inc loop long
printf '#include "h.h"\n#include <cuda/std/limits>\nextern "C" __global__ void k(float *x) { x[threadIdx.x] *= SCALE; }\n' >k.cu
printf '#pragma once\n#define SCALE 2.0f\n' >inc/h.h
touch -d '2020-01-01' inc/h.h
ln -s h.h loop/h.h # a link to itself: NVRTC's stat of loop/h.h fails with ELOOP, no answer a record replays
long=$(printf 'n%.0s' $(seq 300))
printf '#pragma once\n#if __has_include("%s")\n#error no\n#endif\n#define SCALE 2.0f\n' "$long" >long/h.h
removed() { grep -o '[0-9]* of [0-9]* module-scope variables removed' "$1" | head -1; }
same() { # REFERENCE OTHER
  if [ "$(stat -c %s "$1")" = "$(stat -c %s "$2")" ] && cmp -s "$1" "$2"; then echo yes; else
    echo "no ($(stat -c %s "$1") against $(stat -c %s "$2") bytes)"; fi
}
one() { # LABEL CACHE-DIR OUTPUT ARGS...
  label=$1 dir=$2 out=$3
  shift 3
  $GPUJIT build -v --arch sm_90 --cache-dir "$dir" "$@" k.cu -o "$out" >"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
  grep -o 'not cached: .*' "$out.log" | head -1 | sed "s/^/$label: /"
  echo "$label: $(removed "$out.log"), the same size and bytes: $(same a.cubin "$out")"
}
$GPUJIT build -v --arch sm_90 --cache-dir c -I inc k.cu -o a.cubin >a.log 2>&1 || { cat a.log; exit 1; }
echo "cacheable: stored $($GPUJIT cache --cache-dir c ls | grep -c ' k '|| true) entry, $(removed a.log)"
$GPUJIT build --arch sm_90 --cache-dir c -I inc k.cu -o a2.cubin 2>&1 | grep -o ' hit ' | sed 's/^/cacheable again:/'
one "probe error (ELOOP)" c b.cubin -I loop -I inc
$GPUJIT build --arch sm_90 --cache-dir c -I loop -I inc k.cu -o b2.cubin 2>&1 | grep -o ' hit ' | sed 's/^/probe error (ELOOP) again:/'
one "probe error (ENAMETOOLONG)" c n.cubin -I long
cp -r inc new && touch -d '+1 hour' new/h.h # stamped after the compile began: the too-new rule
mv inc old && mv new inc
one "too new" c2 t.cubin -I inc
rm -rf inc && mv old inc
$GPUJIT build -v --arch sm_90 --no-cache -I inc k.cu -o u.cubin >u.log 2>&1 || { cat u.log; exit 1; }
echo "no cache: $(removed u.log), the same size and bytes: $(same a.cubin u.cubin)"
