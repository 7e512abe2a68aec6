# exit: 0
# expect: *exported 1 entry to x.tar.gz*
# expect: *imported 1 entry (0 already here, 0 refused), 1 manifest*
# expect: *saxpy: s2.cubin  sm_90  1 kernel  *  hit *
# expect: *gpujit: error: evil.tar: member /etc/x is an absolute path: refused*
# expect: *limit     1 MiB (the cache's setting)*
$GPUJIT build --arch sm_90 --cache-dir a -o s.cubin "$EXAMPLES/saxpy.cu" >/dev/null || exit 1
$GPUJIT cache --cache-dir a export x.tar.gz || exit 1
$GPUJIT cache --cache-dir b import x.tar.gz || exit 1
$GPUJIT build --arch sm_90 --cache-dir b -o s2.cubin "$EXAMPLES/saxpy.cu" || exit 1
cmp s.cubin s2.cubin || exit 1
python3 - <<'PY'
import tarfile, io
t = tarfile.open("evil.tar", "w")
for name, data in (("gpujit-export.json", b"{}"), ("/etc/x", b"x")):
    i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
t.close()
PY
$GPUJIT cache --cache-dir c import evil.tar; test $? -eq 5 || exit 1
$GPUJIT cache --cache-dir b limit 1MiB
