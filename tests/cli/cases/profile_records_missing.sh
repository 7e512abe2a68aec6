# exit: 0
# expect: *emptied: 0 partial True compiles 0*
# expect: *PARTIAL: records of a process are missing; the notes say whose and why*
# expect: *note: records file p*.jsonl is empty (emptied while the run went on): what its process recorded is missing from this report*
# expect: *cut: 0 partial True*
# expect: *note: records file p*.jsonl lost its beginning (emptied while the run went on)*
# expect: *read-only: 0 partial True compiles 0*
# expect: *note: process * could not write its records (Permission denied)*
# A report whose records are missing says so — partial, and why — instead of counting 0 compiles
# as if there were none: a records file the program emptied, one emptied and then written on, and
# a child that finds the records directory read-only (it cannot make its file: it says so in the
# file the profile made for that before the run).
cuda=${CUDA_PATH:-/usr/local/cuda}
[ -x "$cuda/bin/ptxas" ] || { echo "skip: no ptxas in $cuda"; exit 77; }
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
$GPUJIT build -q --ptx --arch sm_90 -o k.ptx k.cu || exit 1
ptxas="$cuda/bin/ptxas -arch=sm_90 $PWD/k.ptx -o $PWD/k.cubin"
totals() { python3 -c "import json; t=json.load(open('$1'))['totals']; print('partial', t['partial'], 'compiles', t['compiles'])"; }
r=$($GPUJIT profile --json p1.json -- sh -c "$ptxas && for f in \"\$GPUJIT_PROFILE_DIR\"/p*.jsonl; do : > \"\$f\"; done" 2>&1)
echo "emptied: $? $(totals p1.json)"; echo "$r"
r=$($GPUJIT profile --json p2.json -- sh -c "$ptxas && for f in \"\$GPUJIT_PROFILE_DIR\"/p*.jsonl; do : > \"\$f\"; done && $ptxas" 2>&1)
echo "cut: $? $(totals p2.json)"; echo "$r"
# as root a read-only directory is writable still: the profile then runs as nobody
as=""
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || { echo "skip: root, and no setpriv to run as another user"; exit 77; }
  as="setpriv --reuid=65534 --regid=65534 --clear-groups"
  chmod 777 "$PWD" && touch p3.json && chmod 666 p3.json
fi
r=$($as $GPUJIT profile --json p3.json -- sh -c "chmod a-w \"\$GPUJIT_PROFILE_DIR\" && ${ptxas%.cubin}3.cubin; chmod u+w \"\$GPUJIT_PROFILE_DIR\"" 2>&1)
echo "read-only: $? $(totals p3.json)"; echo "$r"
exit 0
