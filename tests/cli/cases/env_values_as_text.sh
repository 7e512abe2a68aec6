# exit: 0
# expect: *listing: valid UTF-8, 1 line starting GPUJIT_NO_CACHE*
# expect: *GPUJIT_BASE_DIR                 /src\\nGPUJIT_NO_CACHE                 1  (environment)  (environment)*
# expect: *GPUJIT_WORKER                   /opt/\\xff\\xfe/w  (environment)*
# expect: *GPUJIT_ARCH                     sm_0  (environment; NOT IN EFFECT, refused: a build fails, as it is not sm_XX or compute_XX*
# expect: *GPUJIT_CACHE_MAX_SIZE           1Q  (environment; NOT IN EFFECT, ignored with a warning, no size limit applied: invalid size '1Q'*
# expect: *GPUJIT_SERVER                   yes  (environment; NOT IN EFFECT, ignored: only 0 or 1 means anything)*
# expect: *GPUJIT_DEVICE                   one  (environment; NOT IN EFFECT, not a device number: read as device 0)*
# expect: *GPUJIT_BENCH_OBSERVE            off  (environment; NOT IN EFFECT, ignored: only 0 means anything)*
# expect: *GPUJIT_CHECK_THREADS            0  (environment; NOT IN EFFECT, ignored: not a count of 1-64*
# expect: *good values: GPUJIT_ARCH                     sm_90  (environment)|GPUJIT_CACHE_MAX_SIZE           2G  (environment)|GPUJIT_SERVER                   0  (environment)|*
# reject: *sm_90  (environment; NOT*
# `gpujit env` shows each value as one line of UTF-8 text: a line break or a byte that is no UTF-8
# escaped (before: a value could print a line that reads as another variable, and the listing
# was not UTF-8), and a value gpujit refuses or ignores is said to be so, not shown as in effect.
GPUJIT_BASE_DIR=$'/src\nGPUJIT_NO_CACHE                 1  (environment)' GPUJIT_WORKER=$'/opt/\xff\xfe/w' \
  GPUJIT_ARCH=sm_0 GPUJIT_CACHE_MAX_SIZE=1Q GPUJIT_SERVER=yes GPUJIT_DEVICE=one GPUJIT_BENCH_OBSERVE=off \
  GPUJIT_CHECK_THREADS=0 $GPUJIT env > env.txt
python3 - <<'PY'
text = open("env.txt", "rb").read().decode("utf-8")
print("listing: valid UTF-8, %d line starting GPUJIT_NO_CACHE" % sum(l.startswith("GPUJIT_NO_CACHE") for l in text.splitlines()))
PY
grep -v '^  ' env.txt
echo "good values: $(GPUJIT_ARCH=sm_90 GPUJIT_CACHE_MAX_SIZE=2G GPUJIT_SERVER=0 $GPUJIT env | grep -E '^GPUJIT_(ARCH|CACHE_MAX_SIZE|SERVER) ' | tr '\n' '|')"
