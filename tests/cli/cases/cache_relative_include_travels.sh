# exit: 0
# expect: *-I inc: stored under src/<absolute path>: yes*
# expect: *-I inc: imported 1 entry (0 already here, 0 refused)*
# expect: *-I inc: the copied checkout hits: yes, the same bytes as its own compile: yes*
# expect: *-I inc: its header edited: miss*
# expect: *-I .: stored under src/<absolute path>: yes*
# expect: *-I .: imported 1 entry (0 already here, 0 refused)*
# expect: *-I .: the copied checkout hits: yes, the same bytes as its own compile: yes*
# expect: *-I .: its header edited: miss*
# expect: *-I ../x: stored under src/<absolute path>: yes*
# expect: *-I ../x: imported 1 entry (0 already here, 0 refused)*
# expect: *-I ../x: the copied checkout hits: yes, the same bytes as its own compile: yes*
# expect: *-I ../x: its header edited: miss*
# expect: *-I sub/../inc: stored under src/<absolute path>: yes*
# expect: *-I sub/../inc: imported 1 entry (0 already here, 0 refused)*
# expect: *-I sub/../inc: the copied checkout hits: yes, the same bytes as its own compile: yes*
# expect: *-I sub/../inc: its header edited: miss*
# expect: *-I ./inc: stored under src/<absolute path>: yes*
# expect: *-I ./inc: imported 1 entry (0 already here, 0 refused)*
# expect: *-I ./inc: the copied checkout hits: yes, the same bytes as its own compile: yes*
# reject: *refused:*
# reject: *not a file of gpujit's cache*
# A header found through a relative include directory (CMake's, Python's include_dirs) is dumped
# at its absolute path: the export imports whole, and a copy of the checkout built with --base-dir
# hits what the original stored. Each form: -I DIR as given, the working directory (relative to
# the checkout), where the header lies.
top=$PWD
one() { # FORM CWD HEADER
  form=$1 cwd=$2 hdr=$3
  cd "$top" && rm -rf X Y a b x.tar.gz
  mkdir -p X/src X/sub X/build "X/$(dirname "$hdr")"
  printf '#include "h.h"\nextern "C" __global__ void k(float *x) { x[threadIdx.x] *= H; }\n' >X/src/k.cu
  printf '#define H 2.0f\n' >"X/$hdr"
  src=$(realpath --relative-to="X/$cwd" X/src/k.cu)
  (cd "X/$cwd" && $GPUJIT build -q --arch sm_90 --cache-dir "$top/a" --base-dir "$top/X" -I "$form" "$src" -o k.cubin) ||
    return 1
  dumped=no
  [ -n "$(find a/entries -path "*/src$top/X/$hdr")" ] && dumped=yes
  echo "-I $form: stored under src/<absolute path>: $dumped"
  $GPUJIT cache --cache-dir a export x.tar.gz >/dev/null || return 1
  echo "-I $form: $($GPUJIT cache --cache-dir b import x.tar.gz 2>&1)"
  cp -a X Y # -a: mtimes kept, as a checkout's are (the line table holds each source's mtime)
  cd "$top/Y/$cwd" || return 1
  out=$($GPUJIT build --arch sm_90 --cache-dir "$top/b" --base-dir "$top/Y" -I "$form" "$src" -o hit.cubin 2>&1)
  $GPUJIT build -q --arch sm_90 --no-cache --base-dir "$top/Y" -I "$form" "$src" -o own.cubin || return 1
  hit=no same=no
  [[ "$out" == *" hit "* ]] && hit=yes
  cmp -s hit.cubin own.cubin && same=yes
  echo "-I $form: the copied checkout hits: $hit, the same bytes as its own compile: $same"
  printf '#define H 3.0f\n' >"$top/Y/$hdr"
  out=$($GPUJIT build --arch sm_90 --cache-dir "$top/b" --base-dir "$top/Y" -I "$form" "$src" -o edited.cubin 2>&1)
  if [[ "$out" == *" miss"* ]]; then echo "-I $form: its header edited: miss"; else echo "-I $form: its header edited: $out"; fi
}
one inc . inc/h.h || exit 1
one . . h.h || exit 1
one ../x build x/h.h || exit 1
one sub/../inc . inc/h.h || exit 1
one ./inc . inc/h.h || exit 1
