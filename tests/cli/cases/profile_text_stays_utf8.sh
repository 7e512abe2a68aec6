# exit: 0
# expect: *report: 0*
# expect: *m.csv: valid UTF-8, U+FFFD where the bytes were*
# expect: *p.html: valid UTF-8, U+FFFD where the bytes were*
# expect: *j.json: valid UTF-8, U+FFFD where the bytes were*
# A command line or NVRTC program name may be any bytes; the CSV, the HTML page and the JSON stay
# UTF-8 text (a byte that is none becomes U+FFFD) instead of passing the bytes on (before: none
# of the three decoded as UTF-8). Text that is UTF-8 is left as it is.
python3 - <<'PY'
import os
os.makedirs("rec")
T0 = 1_700_000_000_000_000_000
lines = [
    b'{"k":"proc","v":1,"pid":4100,"tid":4100,"ppid":1,"exe":"/usr/bin/python3","cmd":"python3 tr\xe9in\xff.py \xc3\xa9t\xc3\xa9","t":%d}' % T0,
    b'{"k":"nvrtc","pid":4100,"tid":4100,"name":"k\xfe\xc0\xafrn.cu","src_hash":"%s","headers":0,"options":[],"t0":%d,"t1":%d,"result":0,"cubin_bytes":64,"cubin_hash":"%s"}'
    % (b"a1" * 16, T0 + 1000000, T0 + 41000000, b"5a" * 16),
    b'{"k":"exit","pid":4100,"tid":4100,"t":%d,"status":0,"lost":0}' % (T0 + 90000000),
]
open("rec/p4100-%d.jsonl" % T0, "wb").write(b"\n".join(lines) + b"\n")
PY
$GPUJIT profile report rec -q --csv=m.csv --html p.html --json=j.json; echo "report: $?"
for f in m.csv p.html j.json; do
  python3 - "$f" <<'PY'
import json, sys
f = sys.argv[1]
try:
    text = open(f, "rb").read().decode("utf-8")
except UnicodeDecodeError as e:
    print("%s: NOT UTF-8 (%s)" % (f, e)); sys.exit()
if f == "j.json":
    text = json.dumps(json.loads(text), ensure_ascii=False)
elif f == "p.html":
    text = text.replace("\\ufffd", "\ufffd")
ok = "k\ufffd\ufffd\ufffdrn.cu" in text and (f == "m.csv" or "tr\ufffdin\ufffd.py \u00e9t\u00e9" in text)
print("%s: valid UTF-8%s" % (f, ", U+FFFD where the bytes were" if ok else ", but the names are not there"))
PY
done
