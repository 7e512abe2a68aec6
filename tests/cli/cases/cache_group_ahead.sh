# exit: 0
# expect: *stored: 1 noted*
# expect: *hit: 2 checks, 1 begun ahead*
# expect: *note gone: 2 checks, 0 begun ahead*
# expect: *noted again: 1*
# expect: *hit again: 2 checks, 1 begun ahead*
# A hit's head start (docs/cache-format.md): the store notes the toolkit group its sources used,
# and the next build of the same sources begins that group's check before it works out its key —
# the check's timeline (GPUJIT_BENCH_CHECK=v, logged at the info level -v prints: the group's
# check, then the module's own records) says "begun ahead". With the note gone (notes are the first thing the size limit
# drops) a hit checks the usual way and notes the group again.
if [ "$(nproc)" -lt 2 ]; then echo "skip: one CPU here, so no helper thread begins a check ahead"; exit 77; fi
export GPUJIT_SERVER=0
printf '#include <cuda/std/type_traits>\nextern "C" __global__ void k(float *x) { x[0] *= 2.0f; }\n' > k.cu
b() { GPUJIT_CHECK_THREADS=2 GPUJIT_BENCH_CHECK=v "$GPUJIT" build -v --cache-dir c --arch sm_90 -o k.cubin k.cu 2>&1; }
checks() { local out; out=$(b); echo "$(grep -c 'check of' <<<"$out") checks, $(grep -c 'begun ahead' <<<"$out") begun ahead"; }
b > /dev/null
echo "stored: $(ls c/notes/group | wc -l) noted"
echo "hit: $(checks)"
rm -r c/notes/group
echo "note gone: $(checks)"
echo "noted again: $(ls c/notes/group | wc -l)"
echo "hit again: $(checks)"
