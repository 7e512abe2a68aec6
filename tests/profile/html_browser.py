#!/usr/bin/env python3
"""The profile's HTML page in a real browser (CTest test_profile_html).

A saved profile with kernels on two GPUs and names made to break a page that does not escape
them (tests/profile/make_records.py --hostile) is reported as HTML; headless Chromium renders it:
  - its script ran to its end without an error (the DOM after load: <body data-rendered="ok">),
    filled the module table (5 rows) and drew the timeline;
  - no markup came from the records: no <img> in the DOM, the title is the page's, the hostile
    kernel name is a table cell's text;
  - nothing was loaded and nothing refused: the console has no CSP violation and no error;
  - the screenshot (a PNG read with zlib, no imaging library) has the bar colours — compile,
    load and GPU — inside the box the page reports for its module bars, and kernels and compiles
    inside the timeline's.
Skipped (exit 77, with the reason) only where no Chromium is installed and GPUJIT_REQUIRE_CHROMIUM
is not set; scripts/test.sh installs Debian's chromium and sets it.

  html_browser.py GPUJIT_CLI
"""
import html
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
COMPILE, LOAD, GPU = (0xE8, 0x85, 0x3D), (0x7E, 0x57, 0xC2), (0x2E, 0x9E, 0x5B)
W, H = 1400, 1600


def chromium():
    for name in [os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def browser(exe, profile_dir, *args):
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--user-data-dir=" + profile_dir, "--window-size=%d,%d" % (W, H), "--enable-logging=stderr", "--v=0",
           "--force-device-scale-factor=1", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit("chromium failed (%d): %s" % (r.returncode, r.stderr[-2000:]))
    return r


def png_pixels(path):
    """(width, height, rows of RGB tuples' bytes, bytes per pixel) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (2, 6) and interlace == 0, "PNG kind %s" % (ihdr,)
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows, bpp


def count(img, box, colour, tol=3):
    w, h, rows, bpp = img
    x0, y0, bw, bh = box
    n = 0
    for y in range(max(0, y0), min(h, y0 + bh)):
        row = rows[y]
        for x in range(max(0, x0), min(w, x0 + bw)):
            px = row[x * bpp:x * bpp + 3]
            if all(abs(px[k] - colour[k]) <= tol for k in range(3)):
                n += 1
    return n


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    cli = sys.argv[1]
    exe = chromium()
    if not exe:
        if os.environ.get("GPUJIT_REQUIRE_CHROMIUM") == "1":
            raise SystemExit("FAIL: no Chromium, and GPUJIT_REQUIRE_CHROMIUM=1 (scripts/test.sh could install it)")
        print("skip: no Chromium here (apt-get install chromium; scripts/test.sh installs it)")
        sys.exit(77)
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        rec, saved, page = os.path.join(tmp, "rec"), os.path.join(tmp, "run.gjprof"), os.path.join(tmp, "page.html")
        subprocess.run([sys.executable, os.path.join(HERE, "make_records.py"), "--hostile", "--long-paths", rec], check=True)
        subprocess.run([cli, "profile", "report", rec, "-q", "-o", saved], check=True)
        subprocess.run([cli, "profile", "report", saved, "-q", "--html", page], check=True)
        url = "file://" + page
        dom_run = browser(exe, os.path.join(tmp, "b1"), "--dump-dom", url)
        dom = dom_run.stdout
        body = re.search(r"<body([^>]*)>", dom)
        attrs = dict(re.findall(r'([a-z-]+)="([^"]*)"', body.group(1) if body else ""))
        check(attrs.get("data-rendered") == "ok", "the page's script ran to its end: data-rendered=%r" % attrs.get("data-rendered"))
        check("data-errors" not in attrs, "no script error: %s" % re.sub(r"<[^>]+>", "", re.search(r'<pre id="errors">(.*?)</pre>', dom, re.S).group(1) if re.search(r'<pre id="errors">(.*?)</pre>', dom, re.S) else ""))
        check(attrs.get("data-modules") == "5", "the module table has its 5 rows: %r" % attrs.get("data-modules"))
        check(len(re.findall(r"<rect [^>]*data-i=", dom)) >= 300, "the timeline drew its events (%d)" % len(re.findall(r"<rect [^>]*data-i=", dom)))
        check("<img" not in dom, "no <img> element came from the records")
        title = re.search(r"<title>(.*?)</title>", dom, re.S)
        check(title is not None and "pwned" not in html.unescape(title.group(1)).split("onerror")[0] and
              html.unescape(title.group(1)).startswith("gpujit profile: python3 train.py"),
              "the title is the page's: %r" % (title.group(1)[:80] if title else None))
        cells = [html.unescape(re.sub(r"<wbr>", "", c)) for c in re.findall(r'<td class="left name">((?:[^<]|<wbr>)*)', dom)]
        check(any(c.startswith("</script><img src=x onerror=") for c in cells), "the hostile kernel name is a cell's text")
        console = [l for l in dom_run.stderr.splitlines() if "CONSOLE" in l or "Content Security Policy" in l or "Refused" in l]
        check(not console, "the console is quiet (no CSP violation, no error): %s" % console[:3])
        boxes = {k: [int(v) for v in attrs.get(k, "0,0,0,0").split(",")] for k in ("data-modules-bars", "data-timeline-box")}
        check(all(b[2] > 0 and b[3] > 0 for b in boxes.values()), "the page reports where it drew: %s" % boxes)
        # a long path breaks at its separators: a <wbr> after each '/', no break inside a name
        long_cell = [c for c in re.findall(r'<td class="left name">((?:[^<]|<wbr>)*)', dom) if "elementwise" in c]
        check(long_cell and long_cell[0].startswith("/<wbr>home/<wbr>you/<wbr>projects/<wbr>") and
              long_cell[0].endswith("/<wbr>scale.cu"), "a long path may break after each '/': %s" % long_cell[:1])
        style = re.search(r"td\.name \{[^}]*\}", dom)
        check(style is not None and "break-all" not in style.group(0) and "overflow-wrap: anywhere" in style.group(0),
              "names break at separators, inside a word only where one part is too long: %s" % (style.group(0) if style else None))
        # cards: no driver JIT beside loads it did not see; the GPU card's reason
        cards = re.sub(r"<[^>]+>", "|", re.search(r'<div id="cards">(.*?)</div>\s*<section', dom, re.S).group(1))
        check("driver JIT" in cards, "loads recorded: the driver JIT beside them: %s" % cards[:300])
        # a view from the address: grouped by compiler (the costliest group first), sorted by GPU ms;
        # broken.cu failed, but NVRTC compiled it: its group is nvrtc's, not "failed"
        for view in ("compiler", "origin"):  # origin: the name earlier pages' addresses used
            grouped = browser(exe, os.path.join(tmp, "b3"), "--dump-dom", url + "#group=%s&sort=gpu_ms" % view).stdout
            groups = [html.unescape(g) for g in re.findall(r'<tr class="group"><td class="left name">([^<]*)<', grouped)]
            check(groups == ["nvrtc (4)", "triton (1)"],
                  "#group=%s groups the rows by compiler, the costliest first: %s" % (view, groups))
        # a run that recorded no GPU work and no loads: the card gives the reason, not "see the notes"
        quiet = os.path.join(tmp, "quiet.html")
        subprocess.run([cli, "profile", "-q", "--html", quiet, "--", "true"], check=True)
        qdom = browser(exe, os.path.join(tmp, "b4"), "--dump-dom", "file://" + quiet).stdout
        qcards = re.sub(r"\s*<[^>]+>\s*", "|", re.search(r'<div id="cards">(.*?)</div>\s*<section', qdom, re.S).group(1))
        check("no process created a CUDA context" in qcards and "see the notes" not in qcards,
              "no GPU work recorded: the GPU card says why: %s" % qcards[:300])
        check("|0 loads|" in qcards and "driver JIT" not in qcards, "no loads: no driver JIT beside them: %s" % qcards[:300])
        check(re.search(r'<th class="\s*sorted-desc"[^>]*>GPU ms</th>', grouped) is not None, "#sort=gpu_ms sorts by GPU ms")
        shot = os.path.join(tmp, "shot.png")
        browser(exe, os.path.join(tmp, "b2"), "--screenshot=" + shot, url)
        img = png_pixels(shot)
        check(img[0] == W and img[1] == H, "the screenshot is %dx%d" % (img[0], img[1]))
        bars = boxes["data-modules-bars"]
        n = {name: count(img, bars, c) for name, c in (("compile", COMPILE), ("load", LOAD), ("GPU", GPU))}
        check(n["compile"] >= 500 and n["load"] >= 20 and n["GPU"] >= 100,
              "the module bars show compile, load and GPU time where the page drew them: %s pixels in %s" % (n, bars))
        beside = (bars[0] - bars[2] - 10, bars[1], bars[2], bars[3])  # the number columns left of the bars
        o = {name: count(img, beside, c) for name, c in (("compile", COMPILE), ("load", LOAD), ("GPU", GPU))}
        check(sum(o.values()) == 0, "the bar colours are in the bar column, not beside it: %s in %s" % (o, beside))
        first = img[2][bars[1] + 7][(bars[0] + 1) * img[3]:(bars[0] + 1) * img[3] + 3]  # the costliest module's bar, its start
        check(all(abs(first[k] - COMPILE[k]) <= 3 for k in range(3)), "the first bar starts with its compile time: %s" % list(first))
        tl = boxes["data-timeline-box"]
        m = {name: count(img, tl, c) for name, c in (("compile", COMPILE), ("kernel", GPU))}
        check(m["compile"] >= 500 and m["kernel"] >= 50, "the timeline shows compiles and kernels: %s pixels in %s" % (m, tl))
        if failures and os.environ.get("GPUJIT_KEEP_SCREENSHOT"):
            shutil.copy(shot, os.environ["GPUJIT_KEEP_SCREENSHOT"])
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
