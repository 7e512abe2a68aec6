# exit: 0
# expect: *over the limit: 5 *more than 1048576 bytes in all (the cache's size limit): refused before staging more*
# expect: *staged: 0 files left*
# expect: *no limit: not refused for its size*
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
$GPUJIT cache --cache-dir c limit 1M >/dev/null || exit 1
r=$($GPUJIT cache --cache-dir c import big.tar.gz 2>&1); echo "over the limit: $? $r"
echo "staged: $(find c -path '*/tmp/*' -type f | wc -l) files left"
r=$($GPUJIT cache --cache-dir d import big.tar.gz 2>&1)
case "$r" in *"in all"*) echo "no limit: refused for its size: $r" ;; *) echo "no limit: not refused for its size" ;; esac
