# exit: 0
# expect: *missing: 4 *nope.gjprof: no such saved profile*
# expect: *empty: 5 *empty.gjprof: empty, not a gpujit saved profile*
# expect: *the JSON: 5 *p.json: the JSON of gpujit profile --json, not a saved profile*
# expect: *a trace: 5 *t.json: a trace (Trace Event Format), not a saved profile*
# expect: *gzip: 5 *gzip-compressed: gunzip it first*
# expect: *garbage: 5 *not a gpujit saved profile (no tar header*
# expect: *binary after a brace: 5 *not a gpujit saved profile (no tar header*
# expect: *another tar: 5 *a tar archive, not a gpujit saved profile (its first member is 'a.txt'*
# expect: *truncated: all refused*
# expect: *cut in the manifest: 5 *truncated: the manifest ends after*
# expect: *cut in a member: 5 *truncated: member p4100-*.jsonl ends after*
# expect: *no end: 5 *truncated: the end of the archive is missing*
# expect: *damaged member: 5 *damaged: member p4100-*.jsonl does not hold what was saved*
# expect: *newer version: 2 *a saved profile of version 2; this gpujit reads version 1*
# expect: *member not listed: 5 *damaged: member 'extra.jsonl' is not one its manifest lists*
# expect: *a fifo: 4 *not a regular file*
# expect: *no temporary directories left: yes*
# A file that is not a saved profile, or one cut short or changed, is refused with what it is and
# where, and a non-zero exit: 5 (bad input), 2 for a version this gpujit does not read, 4 for
# what cannot be read; nothing unpacked is left behind.
here=$(cd "$EXAMPLES/../tests" && pwd)
export TMPDIR=$PWD/tmp
mkdir tmp
r() { out=$("$@" 2>&1); echo "$? $out"; }
python3 "$here/profile/make_records.py" rec
$GPUJIT profile report rec -q -o good.gjprof --json=p.json --trace t.json
echo "missing: $(r $GPUJIT profile report nope.gjprof)"
: > empty.gjprof; echo "empty: $(r $GPUJIT profile report empty.gjprof)"
echo "the JSON: $(r $GPUJIT profile report p.json)"
echo "a trace: $(r $GPUJIT profile report t.json)"
gzip -c good.gjprof > good.gjprof.gz; echo "gzip: $(r $GPUJIT profile report good.gjprof.gz)"
python3 -c "import random, sys; r = random.Random(7); sys.stdout.buffer.write(bytes([1]) + bytes(r.randrange(256) for _ in range(2999)))" > garbage.gjprof; echo "garbage: $(r $GPUJIT profile report garbage.gjprof)"
python3 -c "import random, sys; r = random.Random(8); sys.stdout.buffer.write(b'{' + bytes(r.randrange(256) for _ in range(2999)))" > brace.gjprof; echo "binary after a brace: $(r $GPUJIT profile report brace.gjprof)"
echo hi > a.txt && tar cf other.tar a.txt; echo "another tar: $(r $GPUJIT profile report other.tar)"
size=$(stat -c %s good.gjprof); bad=""
for cut in 1 100 511 512 513 1024 1536 2048 3000 $((size / 2)) $((size - 1025)) $((size - 1024)) $((size - 600)) $((size - 1)); do
  head -c $cut good.gjprof > cut.gjprof
  out=$($GPUJIT profile report cut.gjprof 2>&1); rc=$?
  [ $rc = 5 ] && [[ "$out" == *"truncated"* || "$out" == *"damaged"* || "$out" == *"not a gpujit saved profile"* ]] ||
    bad="$bad $cut:$rc:$out"
done
echo "truncated: ${bad:-all refused}"
head -c 700 good.gjprof > cut.gjprof; echo "cut in the manifest: $(r $GPUJIT profile report cut.gjprof)"
python3 - good.gjprof <<'PY'
import sys, tarfile
t = tarfile.open(sys.argv[1])
names = t.getnames()
m = t.getmember([n for n in names if n.startswith("p4100-")][0])
data = open(sys.argv[1], "rb").read()
open("member.gjprof", "wb").write(data[:m.offset_data + 10])                     # cut inside it
open("noend.gjprof", "wb").write(data[:-1024])                                   # its two zero blocks gone
d = bytearray(data); d[m.offset_data + 5] ^= 0x20; open("flip.gjprof", "wb").write(bytes(d))
PY
echo "cut in a member: $(r $GPUJIT profile report member.gjprof)"
echo "no end: $(r $GPUJIT profile report noend.gjprof)"
echo "damaged member: $(r $GPUJIT profile report flip.gjprof)"
python3 - good.gjprof <<'PY'
import copy, io, json, sys, tarfile
src = tarfile.open(sys.argv[1])
def rebuild(out, manifest_edit, extra=None):
    with tarfile.open(out, "w", format=tarfile.USTAR_FORMAT) as dst:
        for m in map(copy.copy, src.getmembers()):
            data = src.extractfile(m).read()
            if m.name == "gpujit-profile.json":
                j = json.loads(data); manifest_edit(j); data = json.dumps(j).encode()
                m.size = len(data)
            dst.addfile(m, io.BytesIO(data))
        if extra:
            i = tarfile.TarInfo(extra); i.size = 2; dst.addfile(i, io.BytesIO(b"{}"))
rebuild("v2.gjprof", lambda j: j.update(version=2))
rebuild("extra.gjprof", lambda j: None, "extra.jsonl")
PY
echo "newer version: $(r $GPUJIT profile report v2.gjprof)"
echo "member not listed: $(r $GPUJIT profile report extra.gjprof)"
mkfifo fifo.gjprof; echo "a fifo: $(r timeout 10 $GPUJIT profile report fifo.gjprof)"
[ -z "$(ls tmp)" ] && echo "no temporary directories left: yes" || ls tmp
