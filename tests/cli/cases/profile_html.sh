# exit: 0
# expect: *run html: 0 bytes yes*
# expect: *report html: 0*
# expect: *doctype: yes*
# expect: *policy: default-src 'none'*script-src 'nonce-*
# expect: *network references: none*
# expect: *markup from the records: none*
# expect: *data: 5 modules, hostile kernel name intact: yes*
# expect: *title escaped: yes*
# expect: *timeline: 4 tracks*
# expect: *merged: 20000 launches in under 8100 blocks: yes*
# expect: *html unwritable: 2 *--html nowhere/p.html: cannot write it*
# The HTML page is one self-contained file: no URL it could load, a policy that runs its own
# script alone, and every name from the records inside its JSON data with '<', '>' and '&'
# escaped — a kernel named </script><img onerror=...> stays text. (tests/profile/html_browser.py
# renders it in Chromium.)
here=$(cd "$EXAMPLES/../tests" && pwd)
r() { out=$("$@" 2>&1); echo "$? $out"; }
$GPUJIT profile -q --html run.html -- true; echo "run html: $? bytes $([ -s run.html ] && echo yes)"
python3 "$here/profile/make_records.py" --hostile rec
$GPUJIT profile report rec -q --html p.html; echo "report html: $?"
head -1 p.html | grep -q '^<!DOCTYPE html>' && echo "doctype: yes"
echo "policy: $(grep -o 'Content-Security-Policy" content="[^"]*' p.html | cut -d'"' -f3)"
python3 - p.html <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
data = re.search(r'<script type="application/json" id="gpujit-data">(.*?)</script>', page, re.S).group(1)
title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
# the records' names are data and the title's text (both checked below); the rest is the page's own
markup = page.replace(data, "").replace(title, "")
# no URL but the SVG namespace's, no element or call that loads anything
urls = [u for u in re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}[^\s\"'<>)]*", page) if u != "http://www.w3.org/2000/svg"]
loaders = re.findall(r"<(?:link|img|iframe|object|embed|base|audio|video|source)\b|@import|url\(|\bsrc=|\bhref=|fetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon|import\(", markup)
print("network references:", "none" if not urls and not loaders else urls + loaders)
print("markup from the records:", "none" if "<" not in data and ">" not in data and "&" not in data else "FOUND")
d = json.loads(data)
evil = [m for m in d["modules"] if "onerror" in m["kernel"]]
print("data: %d modules, hostile kernel name intact: %s" % (len(d["modules"]),
      "yes" if evil and evil[0]["kernel"].startswith("</script><img src=x onerror=") else "no"))
print("title escaped:", "yes" if "<" not in title and "&lt;/script&gt;" in title else title)
print("timeline: %d tracks" % len(d["timeline"]["tracks"]))
PY
python3 "$here/profile/make_records.py" --launches 20000 many
$GPUJIT profile report many -q --html many.html
python3 - many.html <<'PY'
import json, re, sys
d = json.loads(re.search(r'id="gpujit-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
t = d["timeline"]
kernels = [e for e in t["events"] if e[4] == 4]
print("merged: 20000 launches in under 8100 blocks:", "yes" if t["merged"] > 10000 and len(kernels) < 8100 else (t["merged"], len(kernels)))
PY
echo "html unwritable: $(r $GPUJIT profile report rec -q --html nowhere/p.html)"
