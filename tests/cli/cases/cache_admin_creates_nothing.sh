# exit: 0
# expect: *stats missing: entries 0 0*
# expect: *missing made: no*
# expect: *foreign clear: 2 *holds files that are no gpujit cache's: left alone*
# expect: *foreign untouched: notes.txt*
# expect: *a cache with a README: entries 1*
# expect: *include dir is a file: 2 *include directory 'k.cu' is a file, not a directory*
# Inspecting a cache never makes one: stats, ls, clear, verify, prune on a missing directory see an
# empty cache and create nothing; a directory of someone else's files is refused and left as it was.
st() { $GPUJIT cache --cache-dir missing/c stats | grep '^entries' | tr -s ' '; }
echo "stats missing: $(st) $?"
for v in ls clear verify "prune --max-size 1G"; do $GPUJIT cache --cache-dir missing/c $v >/dev/null || echo "$v failed"; done
echo "missing made: $([ -e missing ] && echo yes || echo no)"
mkdir foreign && echo mine > foreign/notes.txt
out=$($GPUJIT cache --cache-dir foreign clear 2>&1); echo "foreign clear: $? $out"
echo "foreign untouched: $(ls foreign | tr '\n' ' ')"
printf 'extern "C" __global__ void k() {}\n' > k.cu
# a real cache with someone's README beside it (the repository's cache/ has one) is still a cache
$GPUJIT build -q --cache-dir withreadme k.cu --ptx -o k.ptx && echo "what this is" > withreadme/README.md
echo "a cache with a README: $($GPUJIT cache --cache-dir withreadme stats | grep '^entries' | tr -s ' ')"
out=$($GPUJIT build -I k.cu k.cu --ptx -o k.ptx 2>&1); echo "include dir is a file: $? $out"
