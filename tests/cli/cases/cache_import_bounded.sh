# exit: 0
# expect: *over the limit: 5 *more than 1048576 bytes in all (the cache's size limit): refused before staging more*
# expect: *staged: 0 files left*
# expect: *no limit: not refused for its size*
# expect: *tiny archive: 5 *more than 268435456 bytes in all (1000 times the archive's * bytes, or 256 MiB: gpujit's bound on how far an archive expands)*
# expect: *tiny staged: 0 files left*
# cache import bounds what it stages before writing it: members whose sizes add past the cache's
# limit are refused when their headers say so (a 116 KiB tar.zst once staged 3.5 GiB first), and
# nothing staged is left behind.
python3 - <<'PY'
import io, tarfile
with tarfile.open("big.tar.gz", "w:gz") as t:
    for i in range(3):
        data = b"\0" * 600000
        info = tarfile.TarInfo("entries/0%d/%s/image.cubin" % (i, "ab" * 15))
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
PY
$GPUJIT cache --cache-dir c limit 1MiB >/dev/null || exit 1
r=$($GPUJIT cache --cache-dir c import big.tar.gz 2>&1); echo "over the limit: $? $r"
echo "staged: $(find c -path '*/tmp/*' -type f | wc -l) files left"
r=$($GPUJIT cache --cache-dir d import big.tar.gz 2>&1)
case "$r" in *"in all"*) echo "no limit: refused for its size: $r" ;; *) echo "no limit: not refused for its size" ;; esac
# With no limit set, what an archive may expand to is bounded still: a member whose header says
# 300 MiB, in an archive of a few hundred bytes, is refused before a byte of it is staged.
python3 - <<'PY'
import gzip, tarfile
info = tarfile.TarInfo("entries/00/" + "ab" * 15 + "/image.cubin")
info.size = 300 << 20
with gzip.open("tiny.tar.gz", "wb") as f:
    f.write(info.tobuf(format=tarfile.USTAR_FORMAT) + b"\0" * 4096)
PY
r=$($GPUJIT cache --cache-dir e import tiny.tar.gz 2>&1); echo "tiny archive: $? $r"
echo "tiny staged: $(find e -path '*/tmp/*' -type f | wc -l) files left"
