# exit: 0
# expect: *first: 0 notes: ctime group request*
# expect: *notes linked: 0 target: empty, stored: 2 entries*
# expect: *counters linked: precious: mine*
# expect: *tmp link: 0 target: empty*
# expect: *not writable: building without storing*c/tmp is a symbolic link: nothing written through it*
# expect: *clear a dir with tmp/: 2 *holds files that are no gpujit cache's: left alone*
# expect: *after: tmp*
# expect: *clear a dir with notes/: 2 *
# expect: *a cache cut short before VERSION: 0*
# expect: *import into a dir with tmp/: 2 *holds files that are no gpujit cache's*
# expect: *limit on a dir with notes/: 2 *holds files that are no gpujit cache's*
# reject: *VERSION written*
# The cache writes nothing through a symbolic link it did not make: notes/group (notes/ctime,
# notes/request: the same records) or tmp/ made a link to elsewhere leaves the link's target
# untouched (the build still succeeds, and still stores its entry); so does a counters file
# (stats, size) made a link. And a
# directory is a cache only by its VERSION (or the whole layout of one cut short before it):
# `cache -C` on a directory that merely holds a tmp/ or notes/ is refused, and writes nothing.
printf 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n' > k.cu
$GPUJIT build -q --cache-dir c --ptx -o k.ptx k.cu; echo "first: $? notes: $(ls c/notes | sort | tr '\n' ' ')"
mkdir elsewhere
for n in group ctime request; do rm -rf "c/notes/$n" && ln -s "$PWD/elsewhere" "c/notes/$n"; done
echo mine > precious
for n in stats size; do rm -f "c/$n" && ln -s "$PWD/precious" "c/$n"; done
printf 'extern "C" __global__ void k(float *x) { x[0] = 2; }\n' > k.cu
$GPUJIT build -q --cache-dir c --ptx -o k.ptx k.cu; r=$?
t=$(ls -A elsewhere | tr '\n' ' ')
echo "notes linked: $r target: ${t:-empty}, stored: $(find c/entries -mindepth 2 -maxdepth 2 | wc -l) entries"
echo "counters linked: precious: $(cat precious)"
rm -rf c/tmp && mkdir elsewhere2 && ln -s "$PWD/elsewhere2" c/tmp
printf 'extern "C" __global__ void k(float *x) { x[0] = 3; }\n' > k.cu
out=$($GPUJIT build --cache-dir c --ptx -o k.ptx k.cu 2>&1); r=$?
t=$(ls -A elsewhere2 | tr '\n' ' ')
echo "tmp link: $r target: ${t:-empty}"
echo "$out"
mkdir -p d/tmp && echo mine > d/tmp/x
out=$($GPUJIT cache --cache-dir d -C 2>&1); echo "clear a dir with tmp/: $? $out"
echo "after: $(ls d | tr '\n' ' ')"
mkdir -p e/notes
out=$($GPUJIT cache --cache-dir e -C 2>&1); echo "clear a dir with notes/: $? $out"
[ -e e/VERSION ] || [ -e d/VERSION ] && echo "VERSION written"
$GPUJIT cache --cache-dir c export x.tar.gz >/dev/null || echo "export failed"
out=$($GPUJIT cache --cache-dir d import x.tar.gz 2>&1); echo "import into a dir with tmp/: $? $out"
out=$($GPUJIT cache --cache-dir e limit 1G 2>&1); echo "limit on a dir with notes/: $? $out"
[ -e e/VERSION ] || [ -e d/VERSION ] && echo "VERSION written"
mkdir -p f/entries f/manifests f/deps f/tmp f/locks
$GPUJIT cache --cache-dir f -C >/dev/null; echo "a cache cut short before VERSION: $?"
exit 0
