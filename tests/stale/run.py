#!/usr/bin/env python3
"""The kernel cache is never stale: each class builds through the cache, changes something that
NVRTC's preprocessor looks at, builds through the cache again and compares that image's code with
a build of the same inputs made with --no-cache after the change. A class fails when the cached
build (a hit, or a compile whose stored entry is then served) gives other code than NVRTC gives
for the files as they are now: the .text*, .nv.constant* and .nv.global.init* sections of a cubin
(read here with struct), or a PTX's text less its comment lines.

usage: run.py PATH/TO/gpujit [--python PYTHON] [-k NAME]... [-j N] [--keep] [--times]
       run.py --list

  --python PY   the Python classes run their snippets with PY, which must import gpujit
                (skipped, with the reason, without it)
  -k NAME       run only the classes whose name contains NAME (repeatable)
  -j N          classes run N at a time (default 1)
  --keep        keep each class's temporary directory (printed on stderr)
  --times       each class's wall time on stderr
  --list        each class's name and what it changes (its docstring)

Prints one line per class (PASS name / FAIL name: why / SKIP name: reason), then
"N passed, N failed, N skipped"; exits 1 when any failed. Standard library only.
"""
import argparse
import concurrent.futures
import ctypes
import http.server
import json
import os
import re
import select
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

ARCH = "sm_90"
OLD = 1_500_000_000 * 10**9  # an mtime (ns) long past: no same-timestamp window can cover it
CODE_PREFIXES = (".text", ".nv.constant", ".nv.global.init")
CLASSES = []


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def stale(fn=None, *, python=False):
    """Register a class; `python`: it runs snippets with --python's interpreter."""
    def reg(f):
        f.python = python
        CLASSES.append(f)
        return f
    return reg(fn) if fn is not None else reg


# ---------------------------------------------------------------- images

def elf_sections(data):
    """{name: bytes} of an ELF64 little-endian file's sections (NOBITS ones: their size)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = []
    for i in range(shnum):
        name, typ, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        heads.append((name, typ, off, size))
    stroff = heads[shstrndx][2]
    out = {}
    for name, typ, off, size in heads:
        end = data.index(b"\0", stroff + name)
        n = data[stroff + name:end].decode("utf-8", "replace")
        out[n] = b"NOBITS %d" % size if typ == 8 else data[off:off + size]
    return out


def code_of(data):
    """What a build's code is: ('elf', sections) or ('ptx', lines less comments)."""
    if data[:4] == b"\x7fELF":
        secs = elf_sections(data)
        return ("elf", tuple(sorted((n, v) for n, v in secs.items() if n.startswith(CODE_PREFIXES))))
    text = data.decode("utf-8", "replace")
    return ("ptx", tuple(l for l in text.splitlines() if not l.lstrip().startswith("//")))


def describe(a, b):
    """How code a (the cached build's) differs from b (the uncached one's), in a few words."""
    if a[0] == "failed" or b[0] == "failed":
        if a[0] == b[0]:
            return "both failed"
        return ("the cached build failed (%s) and the uncached one did not" % a[1] if a[0] == "failed" else
                "the uncached build failed (%s) and the cached one did not" % b[1])
    if a[0] != b[0]:
        return "one is %s, the other %s" % (a[0], b[0])
    if a[0] == "elf":
        da, db = dict(a[1]), dict(b[1])
        names = sorted(n for n in set(da) | set(db) if da.get(n) != db.get(n))
        return "sections %s differ" % ", ".join(names)
    if a[0] == "ptx":
        for x, y in zip(a[1], b[1]):
            if x != y:
                return "PTX %r against %r" % (x.strip(), y.strip())
        return "PTX of %d lines against %d" % (len(a[1]), len(b[1]))
    if a[0] == "project":
        da, db = dict(a[1]), dict(b[1])
        absent = ("failed", "absent")
        bad = sorted(n for n in set(da) | set(db) if not same_code(da.get(n, absent), db.get(n, absent)))
        return "; ".join("module %s: %s" % (n, describe(da.get(n, absent), db.get(n, absent))) for n in bad)
    return "they differ"


def failures(code):
    """The messages of the failed builds in code (a module's or a project's)."""
    if code[0] == "failed":
        return [code[1]]
    if code[0] == "project":
        return [m for _n, c in code[1] for m in failures(c)]
    return []


def same_code(a, b):
    if a[0] == "failed" and b[0] == "failed":
        return True
    if a[0] == "project" and b[0] == "project":
        da, db = dict(a[1]), dict(b[1])
        return set(da) == set(db) and all(same_code(da[n], db[n]) for n in da)
    return a == b


# ---------------------------------------------------------------- a remote store on loopback

class _Store(http.server.BaseHTTPRequestHandler):
    """GET/PUT/HEAD of whole values by path, kept in the server's dict (a WebDAV PUT store)."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _answer(self, code, body=b"", head=False):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def do_GET(self):
        v = self.server.values.get(self.path)
        self._answer(200, v) if v is not None else self._answer(404)

    def do_HEAD(self):
        v = self.server.values.get(self.path)
        self._answer(200 if v is not None else 404, v or b"", head=True)

    def do_PUT(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.server.values[self.path] = self.rfile.read(n)
        self._answer(201)


def http_store(t):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Store)
    srv.values = {}
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    t.cleanups.append(lambda: (srv.shutdown(), srv.server_close()))
    return srv, "http://127.0.0.1:%d/cache" % srv.server_address[1]


# ---------------------------------------------------------------- inotify: act right after a read

class AfterRead:
    """Runs `action` in a thread right after the `nth` reader of `path` closed it (inotify
    IN_CLOSE_NOWRITE): a header changed at a known point of a build (after the include scan read
    it, after NVRTC did)."""
    IN_CLOSE_NOWRITE = 0x10

    def __init__(self, path, nth, action):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        if self.fd < 0:
            raise Skip("inotify_init1 failed: %s" % os.strerror(ctypes.get_errno()))
        if self.libc.inotify_add_watch(self.fd, os.fsencode(path), self.IN_CLOSE_NOWRITE) < 0:
            os.close(self.fd)
            raise Skip("inotify_add_watch failed: %s" % os.strerror(ctypes.get_errno()))
        self.nth, self.action, self.reads, self.fired, self.stop = nth, action, 0, False, False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.stop and self.reads < self.nth:
                r, _, _ = select.select([self.fd], [], [], 0.02)
                if not r:
                    continue
                data = os.read(self.fd, 65536)
                off = 0
                while off < len(data):
                    _wd, mask, _cookie, ln = struct.unpack_from("iIII", data, off)
                    off += 16 + ln
                    if mask & self.IN_CLOSE_NOWRITE:
                        self.reads += 1
                if self.reads >= self.nth:
                    self.action()
                    self.fired = True
        finally:
            os.close(self.fd)

    def done(self):
        self.stop = True
        self.thread.join(10)
        return self.fired


# ---------------------------------------------------------------- one class's world

class Build:
    """What one `gpujit build --json` did: status (hit/built/failed, joined for a project), code."""

    def __init__(self, status, code, doc=None, err=""):
        self.status, self.code, self.doc, self.err = status, code, doc or {}, err

    @property
    def summary(self):
        return self.doc.get("summary", {})

    def reason(self):
        mods = self.doc.get("modules", [])
        why = [m.get("miss_reason") for m in mods if m.get("miss_reason")]
        return ("; miss reason: %s" % why[0]) if why else ""


class Case:
    def __init__(self, suite, name):
        self.suite, self.name = suite, name
        self.dir = tempfile.mkdtemp(prefix=name[:40] + "-", dir=suite.root)
        self.cache = os.path.join(self.dir, "cache")
        self.env = dict(suite.env, GPUJIT_CACHE_DIR=self.cache)
        self.runs = 0
        self.seen = {}  # label -> the uncached build's code after that step
        self.cleanups = []
        self.wrap = []  # a command every gpujit run goes through (a private mount namespace)

    # files
    def p(self, *rel):
        return os.path.join(self.dir, *rel)

    def write(self, rel, text, mtime=None):
        """Write `text` to rel (in place: the inode is kept); `mtime` (ns) sets its mtime."""
        path = self.p(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        if mtime is not None:
            os.utime(path, ns=(mtime, mtime))
        return path

    def edit_keep_stat(self, rel, text):
        """Rewrite rel in place with text of the same size, its atime and mtime put back: only
        ctime and the content say it changed."""
        path = self.p(rel)
        st = os.stat(path)
        if len(text.encode()) != st.st_size:
            raise Fail("test error: %s: %d bytes replacing %d" % (rel, len(text.encode()), st.st_size))
        with open(path, "r+") as f:
            f.write(text)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    def symlink(self, target, rel):
        """rel becomes a symbolic link to target, replacing whatever was there (atomically)."""
        path = self.p(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp-link"
        os.symlink(target, tmp)
        os.replace(tmp, path)

    def mkdir(self, *rels):
        for rel in rels:
            os.makedirs(self.p(rel), exist_ok=True)

    def rm(self, rel):
        path = self.p(rel)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)

    # commands
    def gpujit(self, *args, cwd=None, env=None, timeout=120):
        return subprocess.run([*self.wrap, self.suite.gpujit, *args], cwd=cwd or self.dir, env=env or self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)

    def build(self, *args, cwd=None, env=None, cache=True, project=False):
        """gpujit build --json ARGS (-o or --out-dir added), through the cache or with --no-cache."""
        self.runs += 1
        cwd = self.p(cwd) if cwd else self.dir
        argv = ["build", "--json"]
        if "--arch" not in args:
            argv += ["--arch", ARCH]
        if not cache:
            argv.append("--no-cache")
        out = self.p("out", "%d%s" % (self.runs, "" if project else (".ptx" if "--ptx" in args else ".cubin")))
        os.makedirs(self.p("out"), exist_ok=True)
        argv += ["--out-dir", out] if project else ["-o", out]
        e = dict(env or self.env)
        if not cache:
            e["GPUJIT_SERVER"] = "0"
        r = self.gpujit(*argv, *args, cwd=cwd, env=e)
        err = r.stderr.decode("utf-8", "replace").strip()
        last = err.splitlines()[-1] if err else "exit %d" % r.returncode
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            return Build("failed", ("failed", last), None, err)
        mods = doc.get("modules", [])
        codes = []
        for m in mods:
            if m.get("status") in ("hit", "built") and m.get("output"):
                with open(os.path.join(cwd, m["output"]), "rb") as f:
                    codes.append((m["name"], code_of(f.read())))
            else:
                msg = (m.get("error") or {}).get("message") or last
                codes.append((m["name"], ("failed", msg)))
        status = "/".join(m.get("status", "?") for m in mods) or "failed"
        if not project:
            return Build(status, codes[0][1] if len(codes) == 1 else ("failed", last), doc, err)
        return Build(status, ("project", tuple(sorted(codes))), doc, err)

    def check(self, label, *args, cwd=None, env=None, project=False, differs=None, may_fail=False):
        """Build through the cache, then with --no-cache, from the same files: the code must agree.
        `differs`: labels of earlier steps whose code this step's must not equal (else the class
        tests nothing); `may_fail`: NVRTC may refuse the files as they are now."""
        if self.suite.aged:  # every stamp written so far old enough to be trusted (RACE_NS: one second)
            time.sleep(1.1)
        cached = self.build(*args, cwd=cwd, env=env, project=project)
        fresh = self.build(*args, cwd=cwd, env=env, project=project, cache=False)
        self.compare(label, cached.status, cached.code, fresh.code, cached.reason(), differs, may_fail)
        return cached

    def compare(self, label, status, cached, fresh, reason="", differs=None, may_fail=False):
        bad = failures(fresh)
        if bad and not may_fail:
            raise Fail("test error: at '%s' the uncached build failed: %s" % (label, bad[0]))
        if not same_code(cached, fresh):
            was = [l for l, c in self.seen.items() if same_code(c, cached)]
            raise Fail("%s: the cached build (%s) is not what NVRTC builds now: %s%s%s" % (
                label, status, describe(cached, fresh),
                "; it is the code of step '%s'" % was[-1] if was else "", reason))
        for d in ([differs] if isinstance(differs, str) else differs or []):
            if same_code(self.seen[d], fresh):
                raise Fail("test does not test: after '%s' NVRTC builds the same code as at '%s'" % (label, d))
        self.seen[label] = fresh

    # Python snippets (--python)
    def python(self, code, cwd=None, env=None):
        """Run PROLOGUE + code with --python's interpreter; returns the records both() printed.
        `env`: the class's environment (a build server's: t.server()) by default."""
        if not self.suite.python:
            raise Skip("no --python interpreter given")
        env = dict(env or self.env, STALE_OUT=self.p("out"))
        os.makedirs(self.p("out"), exist_ok=True)
        r = subprocess.run([self.suite.python, "-c", PY_PROLOGUE + code], cwd=self.p(cwd) if cwd else self.dir,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        recs = []
        for line in r.stdout.decode().splitlines():
            if line.startswith("{"):
                recs.append(json.loads(line))
        if r.returncode != 0:
            err = r.stderr.decode("utf-8", "replace").strip().splitlines()
            if any("No module named 'gpujit'" in l for l in err):
                raise Skip("%s cannot import gpujit" % self.suite.python)
            raise Fail("the Python snippet failed: %s" % (err[-1] if err else "exit %d" % r.returncode))
        return recs

    def compare_py(self, recs, differs=None):
        """Each record of both(): its cached build against its uncached one; differs: {label: [labels]}."""
        def code(path, error):
            if not path:
                return ("failed", error or "no image")
            with open(path, "rb") as f:
                return code_of(f.read())
        for rec in recs:
            status = {True: "hit", False: "built", None: "?"}[rec.get("hit")]
            self.compare(rec["tag"], status, code(rec.get("image"), rec.get("error")),
                         code(rec.get("fresh"), rec.get("fresh_error")),
                         "; miss reason: %s" % rec["miss_reason"] if rec.get("miss_reason") else "",
                         (differs or {}).get(rec["tag"]))

    # the build server
    def server_status(self):
        env = {k: v for k, v in self.env.items() if k != "GPUJIT_SERVER"}
        r = self.gpujit("server", "status", "--json", "--cache-dir", self.cache, env=env)
        try:
            return json.loads(r.stdout)
        except ValueError:
            return {}

    def server(self):
        env = {k: v for k, v in self.env.items() if k != "GPUJIT_SERVER"}
        r = self.gpujit("server", "start", "-q", "--cache-dir", self.cache, "--workers", "1", "--idle-timeout", "120",
                        env=env)
        if r.returncode != 0:
            raise Skip("gpujit server start failed: %s" % r.stderr.decode().strip()[-200:])
        self.cleanups.append(lambda: self.gpujit("server", "stop", "-q", "--cache-dir", self.cache, env=env))
        return env

    # toolkits
    def toolkit(self, rel):
        """A toolkit at rel: the suite's copy of the toolkit (a copied include/ tree, bin/ a
        directory of links, the rest links) cloned with hard links; unshare() before editing a file."""
        tpl = self.suite.toolkit_template()
        dst = self.p(rel)
        clone_tree(tpl, dst)
        return dst

    def unshare(self, rel):
        """Give rel (a hard link into the suite's toolkit copy) an inode of its own."""
        path = self.p(rel)
        tmp = path + ".unshare"
        shutil.copy2(path, tmp, follow_symlinks=False)
        os.replace(tmp, path)


def clone_tree(src, dst):
    """dst mirrors src: directories made, files hard-linked, symbolic links copied."""
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        d = os.path.join(dst, rel) if rel != "." else dst
        os.makedirs(d, exist_ok=True)
        for n in dirs + files:
            s, t = os.path.join(root, n), os.path.join(d, n)
            if os.path.islink(s):
                os.symlink(os.readlink(s), t)
                if n in dirs:
                    dirs.remove(n)
            elif n in files:
                os.link(s, t)


PY_PROLOGUE = r'''
import json, os, subprocess, sys
import gpujit
ARCH = "sm_90"
CACHE = os.environ["GPUJIT_CACHE_DIR"]
OUT = os.environ["STALE_OUT"]
_n = [0]
REF = """
import json, sys, gpujit
a = json.loads(sys.argv[1])
m = gpujit.build(a["path"], arch=a["arch"], cache=False, **a["kw"])
open(a["out"], "wb").write(m.image)
"""

def _path(tag):
    _n[0] += 1
    return os.path.join(OUT, "py%d-%s" % (_n[0], "".join(c if c.isalnum() else "_" for c in tag)))

def both(tag, path=None, **kw):
    """Build through the cache in this process, then the same inputs uncached in a new process."""
    rec = {"tag": tag}
    try:
        m = gpujit.build(path, arch=ARCH, cache=CACHE, **kw)
        rec["image"] = _path(tag)
        open(rec["image"], "wb").write(m.image)
        rec["hit"], rec["miss_reason"] = m.cache_hit, m.miss_reason
    except gpujit.GpujitError as e:
        rec["error"] = str(e).splitlines()[0] if str(e) else type(e).__name__
    out = _path(tag + "-fresh")
    r = subprocess.run([sys.executable, "-c", REF, json.dumps({"path": path, "arch": ARCH, "kw": kw, "out": out})],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, GPUJIT_SERVER="0"))
    if r.returncode == 0:
        rec["fresh"] = out
    else:
        lines = r.stderr.decode("utf-8", "replace").strip().splitlines()
        rec["fresh_error"] = lines[-1] if lines else "exit %d" % r.returncode
    print(json.dumps(rec), flush=True)

def write(path, text):
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w") as f:
        f.write(text)

def edit_keep_stat(path, text):
    st = os.stat(path)
    assert len(text.encode()) == st.st_size, (path, text)
    with open(path, "r+") as f:
        f.write(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
'''


# ---------------------------------------------------------------- sources used throughout

K = 'extern "C" __global__ void k(int *o) { o[0] = V; }\n'
K2 = 'extern "C" __global__ void k(int *o) { o[0] = V; o[1] = W; }\n'


def inc(h, body=K, angle=False):
    return ("#include <%s>\n" if angle else '#include "%s"\n') % h + body


def V(n, name="V"):
    return "#define %s %d\n" % (name, n)


FNV = ("__device__ constexpr unsigned fnv(const char *s, unsigned h = 2166136261u)\n"
       "{ return *s ? fnv(s + 1, (h ^ (unsigned char)*s) * 16777619u) : h; }\n")
LOOP = ('extern "C" __global__ void k(float *o, int n)\n'
        '{ float s = 0; for (int i = 0; i < n; i++) s += o[i] * o[i + 1] + V; o[0] = s; }\n')


# ================================================================ header content and its stat

@stale
def header_edited(t):
    """h.h, included by k.cu, is edited (its size changes)."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1))
    t.check("before", "k.cu")
    t.write("h.h", "// edited\n" + V(2))
    t.check("h.h edited", "k.cu", differs="before")


@stale
def header_edited_same_size_mtime_restored(t):
    """h.h is edited in place to the same size and its mtime put back (os.utime): only ctime and
    the content tell."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1), mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("h.h", V(2))
    t.check("h.h edited, size and mtime kept", "k.cu", differs="before")


@stale
def header_edited_same_size_same_second(t):
    """h.h is rewritten to the same size right after the build, in the same second (no utime)."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1))
    t.check("before", "k.cu", "--ptx")
    t.write("h.h", V(2))
    t.check("h.h rewritten at once", "k.cu", "--ptx", differs="before")


@stale
def header_renamed_over_same_size_mtime(t):
    """An editor's save: h.h.new, of the same size and mtime, is renamed over h.h (a new inode)."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1), mtime=OLD)
    t.check("before", "k.cu")
    t.write("h.h.new", V(2), mtime=OLD)
    os.replace(t.p("h.h.new"), t.p("h.h"))
    t.check("h.h renamed over", "k.cu", differs="before")


@stale
def source_edited_same_size_mtime_restored(t):
    """k.cu itself is edited in place to the same size, its mtime put back."""
    t.write("k.cu", "#define V 1\n" + K, mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("k.cu", "#define V 2\n" + K)
    t.check("k.cu edited", "k.cu", differs="before")


@stale
def big_header_edited_at_end(t):
    """A 4 MiB header (comments, then #define V) is edited in its last bytes, size and mtime kept."""
    t.write("k.cu", inc("h.h"))
    pad = ("// " + "x" * 76 + "\n") * ((4 << 20) // 80)
    t.write("h.h", pad + V(1), mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("h.h", pad + V(2))
    t.check("h.h edited at its end", "k.cu", differs="before")


@stale
def header_restored_after_edit(t):
    """h.h edited, then its first content written back: each state gets its own code (the first
    build's entry is right again, the second's is not)."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1), mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("h.h", V(2))
    t.check("edited", "k.cu", differs="before")
    t.edit_keep_stat("h.h", V(1))
    t.check("restored", "k.cu", differs="edited")


@stale
def time_macro_in_header_never_served(t):
    """A header uses __TIME__ (hashed into the code): such builds are not cached, so a second
    build must compile again, never be a hit of the first (docs/cache-in-ci.md)."""
    t.write("k.cu", inc("h.h", 'extern "C" __global__ void k(unsigned *o) { o[0] = T; }\n'))
    t.write("h.h", FNV + "#define T fnv(__TIME__)\n")
    time_served(t, "__TIME__")


def time_served(t, what):
    """Build, wait past the second, build again: a hit then serves the first build's time."""
    first = t.build("k.cu")
    time.sleep(1.05)
    second = t.build("k.cu")
    fresh = t.build("k.cu", cache=False)
    if failures(fresh.code) or same_code(first.code, fresh.code):
        raise Fail("test does not test: %s" % (failures(fresh.code) or ["the time gave the same code a second later"])[0])
    if second.status == "hit":
        raise Fail("the second build, a second later, was a hit of a build that used %s" % what)


PASTE_CAT = "#define CAT(a, b) a##b\n#define XCAT(a, b) CAT(a, b)\n"


@stale
def time_macro_by_token_paste_never_served(t):
    """__TIME__ made by token pasting (XCAT(__TI, ME__)), hashed into the code: no text search
    finds it, yet a build a second later must not be served the first one's time."""
    t.write("k.cu", FNV + PASTE_CAT + 'extern "C" __global__ void k(unsigned *o) { o[0] = fnv(XCAT(__TI, ME__)); }\n')
    time_served(t, "__TIME__ (by token pasting)")


@stale
def time_macro_via_D_never_served(t):
    """-D GJ_T=fnv(__TIME__) (the source never spells __TIME__): a build a second later must not be
    served the first one's time."""
    t.write("k.cu", FNV + 'extern "C" __global__ void k(unsigned *o) { o[0] = GJ_T; }\n')
    first = t.build("k.cu", "-D", "GJ_T=fnv(__TIME__)")
    time.sleep(1.05)
    second = t.build("k.cu", "-D", "GJ_T=fnv(__TIME__)")
    fresh = t.build("k.cu", "-D", "GJ_T=fnv(__TIME__)", cache=False)
    if failures(fresh.code) or same_code(first.code, fresh.code):
        raise Fail("test does not test: %s" % (failures(fresh.code) or ["the time gave the same code a second later"])[0])
    if second.status == "hit":
        raise Fail("the second build, a second later, was a hit of a build that used __TIME__ (through -D)")


# ================================================================ the search path

@stale
def header_in_includer_dir_shadows_I_dir(t):
    """"h.h" was found in -I inc; h.h is created in the source's own directory, searched first."""
    t.write("src/k.cu", inc("h.h"))
    t.write("inc/h.h", V(1))
    t.check("before", "src/k.cu", "-I", "inc")
    t.write("src/h.h", V(2))
    t.check("src/h.h created", "src/k.cu", "-I", "inc", differs="before")


@stale
def header_in_nested_includer_dir(t):
    """sub/x.h includes "y.h", found in -I inc; y.h is created next to the source, then next to
    sub/x.h (the includer's directory, searched first)."""
    t.write("src/k.cu", '#include "sub/x.h"\n' + K)
    t.write("src/sub/x.h", '#include "y.h"\n')
    t.write("inc/y.h", V(1))
    t.check("before", "src/k.cu", "-I", "inc")
    t.write("src/y.h", V(2))
    t.check("src/y.h created", "src/k.cu", "-I", "inc")
    t.write("src/sub/y.h", V(3))
    t.check("src/sub/y.h created", "src/k.cu", "-I", "inc", differs=["before", "src/y.h created"])


@stale
def header_in_earlier_I_dir(t):
    """-I a -I b: "h.h" was b/h.h; a/h.h is created."""
    t.write("src/k.cu", inc("h.h"))
    t.write("b/h.h", V(1))
    t.mkdir("a")
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    t.write("a/h.h", V(2))
    t.check("a/h.h created", "src/k.cu", "-I", "a", "-I", "b", differs="before")


@stale
def angle_header_in_earlier_I_dir(t):
    """-I a -I b: <h.h> was b/h.h; a/h.h is created (with the same size and mtime)."""
    t.write("src/k.cu", inc("h.h", angle=True))
    t.write("b/h.h", V(1), mtime=OLD)
    t.mkdir("a")
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    t.write("a/h.h", V(2), mtime=OLD)
    t.check("a/h.h created", "src/k.cu", "-I", "a", "-I", "b", differs="before")


@stale
def header_deleted_later_I_dir_used(t):
    """-I a -I b: a/h.h is deleted, so b/h.h is used."""
    t.write("src/k.cu", inc("h.h"))
    t.write("a/h.h", V(1), mtime=OLD)
    t.write("b/h.h", V(2), mtime=OLD)
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    t.rm("a/h.h")
    t.check("a/h.h deleted", "src/k.cu", "-I", "a", "-I", "b", differs="before")


@stale
def I_dir_created_later(t):
    """-Xnvrtc -Igen -Xnvrtc -Ib where gen did not exist (the CLI's -I refuses a missing directory,
    NVRTC's own does not): gen/h.h is made."""
    t.write("src/k.cu", inc("h.h", angle=True))
    t.write("b/h.h", V(1))
    args = ("src/k.cu", "-Xnvrtc", "-Igen", "-Xnvrtc", "-Ib")
    t.check("before", *args)
    t.write("gen/h.h", V(2))
    t.check("gen/h.h created", *args, differs="before")


@stale
def raw_nvrtc_I_and_cli_I(t):
    """-Xnvrtc -Ia next to -I b: a/h.h is created (wherever NVRTC puts a), then b/h.h deleted."""
    t.write("src/k.cu", inc("h.h"))
    t.write("b/h.h", V(1))
    args = ("src/k.cu", "-Xnvrtc", "-Ia", "-I", "b")
    t.check("before", *args)
    t.write("a/h.h", V(2))
    t.check("a/h.h created", *args)
    t.rm("b/h.h")
    t.check("b/h.h deleted", *args, differs="before")


@stale
def relative_I_from_another_cwd(t):
    """-I inc is relative: the same command run from d1 and then d2, each with its own inc/h.h."""
    t.write("k.cu", inc("h.h"))
    t.write("d1/inc/h.h", V(1), mtime=OLD)
    t.write("d2/inc/h.h", V(2), mtime=OLD)
    t.check("from d1", "../k.cu", "-I", "inc", cwd="d1")
    t.check("from d2", "../k.cu", "-I", "inc", cwd="d2", differs="from d1")


@stale
def relative_source_from_another_cwd(t):
    """`gpujit build k.cu` from d1 and then from d2: two byte-identical k.cu, each with its own h.h."""
    for d, v in (("d1", 1), ("d2", 2)):
        t.write(d + "/k.cu", inc("h.h"), mtime=OLD)
        t.write(d + "/h.h", V(v), mtime=OLD)
    t.check("from d1", "k.cu", cwd="d1")
    t.check("from d2", "k.cu", cwd="d2", differs="from d1")


@stale
def directory_where_header_was(t):
    """-I a -I b: a/h.h, a file, is replaced by a directory of that name."""
    t.write("src/k.cu", inc("h.h"))
    t.write("a/h.h", V(1))
    t.write("b/h.h", V(2))
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    t.rm("a/h.h")
    os.mkdir(t.p("a/h.h"))
    t.check("a/h.h a directory", "src/k.cu", "-I", "a", "-I", "b", differs="before", may_fail=True)


@stale
def directory_named_like_header_created(t):
    """-I a -I b: "h.h" was b/h.h; a directory a/h.h appears (NVRTC skips it or fails: the cache
    must say the same), then a file where the directory was."""
    t.write("src/k.cu", inc("h.h"))
    t.write("b/h.h", V(1))
    t.mkdir("a")
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    os.makedirs(t.p("a/h.h"))
    t.check("directory a/h.h", "src/k.cu", "-I", "a", "-I", "b", may_fail=True)
    os.rmdir(t.p("a/h.h"))
    t.write("a/h.h", V(2))
    t.check("file a/h.h", "src/k.cu", "-I", "a", "-I", "b", differs="before")


@stale
def include_next_header_edited(t):
    """A/h.h does #include_next <h.h>, which is B/h.h: B/h.h is edited (size and mtime kept)."""
    t.write("k.cu", inc("h.h", angle=True))
    t.write("A/h.h", "#include_next <h.h>\n")
    t.write("B/h.h", V(1), mtime=OLD)
    t.check("before", "k.cu", "-I", "A", "-I", "B")
    t.edit_keep_stat("B/h.h", V(2))
    t.check("B/h.h edited", "k.cu", "-I", "A", "-I", "B", differs="before")


@stale
def include_next_new_dir_between(t):
    """-I A -I B -I C: A/h.h's #include_next found C/h.h; B/h.h is created."""
    t.write("k.cu", inc("h.h", angle=True))
    t.write("A/h.h", "#include_next <h.h>\n")
    t.write("C/h.h", V(1))
    t.mkdir("B")
    args = ("k.cu", "-I", "A", "-I", "B", "-I", "C")
    t.check("before", *args)
    t.write("B/h.h", V(2))
    t.check("B/h.h created", *args, differs="before")


HAS_OPT = '#if __has_include("opt.h")\n#include "opt.h"\n#else\n#define V 1\n#endif\n' + K


@stale
def has_include_becomes_true(t):
    """#if __has_include("opt.h") was false; opt.h is created."""
    t.write("k.cu", HAS_OPT)
    t.check("before", "k.cu")
    t.write("opt.h", V(2))
    t.check("opt.h created", "k.cu", differs="before")


@stale
def has_include_becomes_false(t):
    """#if __has_include("opt.h") was true; opt.h is deleted."""
    t.write("k.cu", HAS_OPT)
    t.write("opt.h", V(2))
    t.check("before", "k.cu")
    t.rm("opt.h")
    t.check("opt.h deleted", "k.cu", differs="before")


@stale
def has_include_next_becomes_true(t):
    """A/h.h tests __has_include_next(<h.h>), false with -I A -I B; B/h.h is created."""
    t.write("k.cu", inc("h.h", angle=True))
    t.write("A/h.h", "#if __has_include_next(<h.h>)\n#include_next <h.h>\n#else\n#define V 1\n#endif\n")
    t.mkdir("B")
    t.check("before", "k.cu", "-I", "A", "-I", "B")
    t.write("B/h.h", V(2))
    t.check("B/h.h created", "k.cu", "-I", "A", "-I", "B", differs="before")


@stale
def has_include_angle_in_earlier_dir(t):
    """__has_include(<opt.h>) is true through b/opt.h; a/opt.h is created earlier on the path."""
    t.write("k.cu", "#if __has_include(<opt.h>)\n#include <opt.h>\n#else\n#define V 1\n#endif\n" + K)
    t.write("b/opt.h", V(2))
    t.mkdir("a")
    t.check("before", "k.cu", "-I", "a", "-I", "b")
    t.write("a/opt.h", V(3))
    t.check("a/opt.h created", "k.cu", "-I", "a", "-I", "b", differs="before")


@stale
def has_include_through_macro(t):
    """#define OPT "opt.h" / #if __has_include(OPT): opt.h is created."""
    t.write("k.cu", '#define OPT "opt.h"\n#if __has_include(OPT)\n#include OPT\n#else\n#define V 1\n#endif\n' + K)
    t.check("before", "k.cu")
    t.write("opt.h", V(2))
    t.check("opt.h created", "k.cu", differs="before")


@stale
def has_include_in_header(t):
    """h.h (not the source) tests __has_include("opt.h"); opt.h is created beside h.h."""
    t.write("src/k.cu", inc("h.h"))
    t.write("inc/h.h", '#if __has_include("opt.h")\n#include "opt.h"\n#else\n#define V 1\n#endif\n')
    t.check("before", "src/k.cu", "-I", "inc")
    t.write("inc/opt.h", V(2))
    t.check("inc/opt.h created", "src/k.cu", "-I", "inc", differs="before")


@stale
def dangling_symlink_header_gets_target(t):
    """-I a -I b: a/h.h is a dangling link (to t/h.h, absent), so b/h.h is used; t/h.h is created.
    a/ is older than a second when the build reads it (its stamp can be trusted): creating t/h.h
    leaves a/'s stamp as it was, so a/ must not vouch for h.h's absence."""
    t.write("src/k.cu", inc("h.h"))
    t.write("b/h.h", V(1))
    t.mkdir("a", "t")
    t.symlink("../t/h.h", "a/h.h")
    time.sleep(1.1)  # past the one second within which no stamp is trusted
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    t.write("t/h.h", V(2))
    t.check("t/h.h created", "src/k.cu", "-I", "a", "-I", "b", differs="before")


@stale
def dangling_symlink_has_include_gets_target(t):
    """#if __has_include("opt.h") with -I a, where a/opt.h is a dangling link (false); its target is
    created (true). a/ is old enough to be trusted, and does not change."""
    t.write("k.cu", HAS_OPT)
    t.mkdir("a", "t")
    t.symlink("../t/opt.h", "a/opt.h")
    time.sleep(1.1)
    t.check("before", "k.cu", "-I", "a")
    t.write("t/opt.h", "#define V 2\n")
    t.check("target created", "k.cu", "-I", "a", differs="before")


@stale
def dangling_symlink_beside_source_gets_target(t):
    """"h.h" beside the source is a dangling link (-I b serves h.h); its target appears elsewhere."""
    t.write("b/h.h", V(1))
    t.write("src/k.cu", inc("h.h"))
    t.mkdir("t")
    t.symlink("../t/h.h", "src/h.h")
    time.sleep(1.1)
    t.check("before", "src/k.cu", "-I", "b")
    t.write("t/h.h", V(2))
    t.check("t/h.h created", "src/k.cu", "-I", "b", differs="before")


@stale
def absolute_path_include_edited(t):
    """#include "/abs/.../h.h" (an absolute path in the directive): the header is edited."""
    t.write("inc/h.h", V(1), mtime=OLD)
    t.write("k.cu", inc(t.p("inc/h.h")))
    t.check("before", "k.cu")
    t.edit_keep_stat("inc/h.h", V(2))
    t.check("h.h edited", "k.cu", differs="before")


@stale
def include_next_in_source(t):
    """#include_next <h.h> in the source itself (NVRTC takes it as #include): -I a -I b, a/h.h is
    created before b/h.h."""
    t.write("src/k.cu", "#include_next <h.h>\n" + K)
    t.write("b/h.h", V(1))
    t.mkdir("a")
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    t.write("a/h.h", V(2))
    t.check("a/h.h created", "src/k.cu", "-I", "a", "-I", "b", differs="before")


@stale
def angle_include_and_source_dir(t):
    """<h.h> with -I inc; h.h is created beside the source (searched for <> or not: the cache must
    say what NVRTC does), then inc/h.h deleted."""
    t.write("src/k.cu", inc("h.h", angle=True))
    t.write("inc/h.h", V(1))
    t.check("before", "src/k.cu", "-I", "inc")
    t.write("src/h.h", V(2))
    t.check("src/h.h created", "src/k.cu", "-I", "inc")
    t.rm("inc/h.h")
    t.check("inc/h.h deleted", "src/k.cu", "-I", "inc", may_fail=True)


@stale
def has_include_of_directory(t):
    """__has_include("opt") where opt is nothing, then a directory, then a file (what NVRTC's
    __has_include says of a directory, the cache must say too)."""
    t.write("k.cu", '#if __has_include("opt")\n#define V 2\n#else\n#define V 1\n#endif\n' + K)
    t.check("nothing", "k.cu")
    t.mkdir("opt")
    t.check("a directory", "k.cu")
    t.rm("opt")
    t.write("opt", "\n")
    t.check("a file", "k.cu", differs="nothing")


@stale
def has_include_inside_macro(t):
    """#define HAS_OPT __has_include("opt.h") / #if HAS_OPT: opt.h is created."""
    t.write("k.cu", '#define HAS_OPT __has_include("opt.h")\n#if HAS_OPT\n#define V 2\n#else\n#define V 1\n#endif\n' + K)
    t.check("before", "k.cu")
    t.write("opt.h", "\n")
    t.check("opt.h created", "k.cu", differs="before")


@stale
def crlf_directives_header_edited(t):
    """A source with CRLF line ends (#include "h.h"\\r\\n): h.h is edited (size and mtime kept)."""
    t.write("k.cu", inc("h.h").replace("\n", "\r\n"))
    t.write("h.h", V(1).replace("\n", "\r\n"), mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("h.h", V(2).replace("\n", "\r\n"))
    t.check("h.h edited", "k.cu", differs="before")


def symlinked_cwd(t):
    """w is a link to deep/w: from w, ../inc is deep/inc for the kernel (and NVRTC), ./inc lexically."""
    t.write("k.cu", inc("h.h", angle=True))
    t.write("deep/inc/h.h", V(1), mtime=OLD)
    t.write("inc/h.h", V(9), mtime=OLD)
    t.mkdir("deep/w")
    t.symlink("deep/w", "w")
    return dict(t.env, PWD=t.p("w"))  # as a shell that cd'ed there says


@stale
def I_dotdot_from_symlinked_cwd(t):
    """Run from w, a link to deep/w, with -I ../inc (deep/inc, not ./inc): deep/inc/h.h is edited."""
    env = symlinked_cwd(t)
    t.check("before", t.p("k.cu"), "-I", "../inc", cwd="w", env=env)
    t.edit_keep_stat("deep/inc/h.h", V(2))
    t.check("deep/inc/h.h edited", t.p("k.cu"), "-I", "../inc", cwd="w", env=env, differs="before")


@stale
def raw_I_dotdot_from_symlinked_cwd(t):
    """Run from w, a link to deep/w, with -Xnvrtc -I../inc (NVRTC resolves it from the real working
    directory): deep/inc/h.h is edited."""
    env = symlinked_cwd(t)
    args = (t.p("k.cu"), "-Xnvrtc", "-I../inc")
    t.check("before", *args, cwd="w", env=env)
    t.edit_keep_stat("deep/inc/h.h", V(2))
    t.check("deep/inc/h.h edited", *args, cwd="w", env=env, differs="before")


ODD_NAMES = ("sp ace.h", "ta\tb.h", "\u00fc.h", "pct%20.h", "semi;colon.h", "ha#sh.h", "eq=al.h",
             "dir with space/h.h", "back\\slash.h", "quo'te.h", "new\\nline.h")


@stale
def odd_header_names_edited(t):
    """Headers whose names hold a space, a tab, a non-ASCII letter, %, ;, #, =, a backslash (also
    as "\\n"), a quote, or sit in a directory with a space: each is edited in turn (size, mtime kept)."""
    t.write("k.cu", "".join('#include "%s"\n' % n for n in ODD_NAMES) + 'extern "C" __global__ void k(int *o) { %s }\n'
            % " ".join("o[%d] = A%d;" % (i, i) for i in range(len(ODD_NAMES))))
    for i, n in enumerate(ODD_NAMES):
        t.write(n, V(i, "A%d" % i), mtime=OLD)
    t.check("before", "k.cu", "--ptx")
    prev = "before"
    for i, n in enumerate(ODD_NAMES):
        t.edit_keep_stat(n, V((i + 5) % 10 if i < 10 else i + 10, "A%d" % i))
        t.check("%r edited" % n, "k.cu", "--ptx", differs=prev)
        prev = "%r edited" % n


# ================================================================ computed includes and macros

@stale
def computed_include_macro(t):
    """cfg.h says #define H "a.h" and k.cu does #include H: cfg.h switches to "b.h", then b.h is
    edited (size and mtime kept)."""
    t.write("k.cu", '#include "cfg.h"\n#include H\n' + K)
    t.write("cfg.h", '#define H "a.h"\n')
    t.write("a.h", V(1))
    t.write("b.h", V(2), mtime=OLD)
    t.check("before", "k.cu")
    t.write("cfg.h", '#define H "b.h"\n')
    t.check("cfg.h names b.h", "k.cu", differs="before")
    t.edit_keep_stat("b.h", V(3))
    t.check("b.h edited", "k.cu", differs="cfg.h names b.h")


@stale
def computed_include_stringized(t):
    """#define STR(x) #x / #include STR(a.h): a.h (in -I inc) is edited, then a.h is created next
    to the source."""
    t.write("src/k.cu", "#define STR(x) #x\n#include STR(a.h)\n" + K)
    t.write("inc/a.h", V(1), mtime=OLD)
    t.check("before", "src/k.cu", "-I", "inc")
    t.edit_keep_stat("inc/a.h", V(2))
    t.check("inc/a.h edited", "src/k.cu", "-I", "inc", differs="before")
    t.write("src/a.h", V(3))
    t.check("src/a.h created", "src/k.cu", "-I", "inc", differs="inc/a.h edited")


@stale
def computed_include_angle_macro(t):
    """#define HDR <a.h> / #include HDR with -I a -I b: a/a.h is created before b/a.h."""
    t.write("src/k.cu", "#define HDR <a.h>\n#include HDR\n" + K)
    t.write("b/a.h", V(1))
    t.mkdir("a")
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    t.write("a/a.h", V(2))
    t.check("a/a.h created", "src/k.cu", "-I", "a", "-I", "b", differs="before")


PASTE = ("#define STR(x) #x\n#define XSTR(x) STR(x)\n#define CAT(a, b) a##b\n#define XCAT(a, b) CAT(a, b)\n"
         "#include XSTR(XCAT(impl_, VARIANT).h)\n")


@stale
def computed_include_token_paste(t):
    """#include XSTR(XCAT(impl_, VARIANT).h) with VARIANT from cfg.h: cfg.h switches VARIANT, then
    the header it now names is edited."""
    t.write("k.cu", '#include "cfg.h"\n' + PASTE + K)
    t.write("cfg.h", "#define VARIANT fast\n")
    t.write("impl_fast.h", V(1))
    t.write("impl_slow.h", V(2), mtime=OLD)
    t.check("before", "k.cu")
    t.write("cfg.h", "#define VARIANT slow\n")
    t.check("VARIANT slow", "k.cu", differs="before")
    t.edit_keep_stat("impl_slow.h", V(3))
    t.check("impl_slow.h edited", "k.cu", differs="VARIANT slow")


@stale
def computed_include_from_D(t):
    """-D VARIANT=fast picks impl_fast.h through a computed include: impl_fast.h is edited."""
    t.write("k.cu", PASTE + K)
    t.write("impl_fast.h", V(1), mtime=OLD)
    t.check("before", "k.cu", "-D", "VARIANT=fast")
    t.edit_keep_stat("impl_fast.h", V(2))
    t.check("impl_fast.h edited", "k.cu", "-D", "VARIANT=fast", differs="before")


@stale
def D_selects_header(t):
    """#ifdef USE_B includes b.h, else a.h: built with -D USE_B and without, then b.h is edited
    and -D USE_B is given again."""
    t.write("k.cu", '#ifdef USE_B\n#include "b.h"\n#else\n#include "a.h"\n#endif\n' + K)
    t.write("a.h", V(1))
    t.write("b.h", V(2), mtime=OLD)
    t.check("-D USE_B", "k.cu", "-D", "USE_B")
    t.check("no -D", "k.cu", differs="-D USE_B")
    t.edit_keep_stat("b.h", V(3))
    t.check("b.h edited, -D USE_B", "k.cu", "-D", "USE_B", differs="-D USE_B")


@stale
def include_under_if_flipped_by_other_header(t):
    """feat.h is included only #if FEATURE, which cfg.h sets: FEATURE goes 1 -> 0, then feat.h
    is edited and cfg.h put back byte for byte (stat too)."""
    t.write("k.cu", '#include "cfg.h"\n#if FEATURE\n#include "feat.h"\n#else\n#define V 1\n#endif\n' + K)
    t.write("cfg.h", "#define FEATURE 1\n", mtime=OLD)
    t.write("feat.h", V(2), mtime=OLD)
    t.check("FEATURE 1", "k.cu")
    t.edit_keep_stat("cfg.h", "#define FEATURE 0\n")
    t.check("FEATURE 0", "k.cu", differs="FEATURE 1")
    t.edit_keep_stat("feat.h", V(3))
    t.edit_keep_stat("cfg.h", "#define FEATURE 1\n")
    t.check("feat.h edited, FEATURE 1", "k.cu", differs="FEATURE 1")


@stale
def builtin_macro_selects_header(t):
    """#if __CUDACC_RTC__ && __CUDA_ARCH__ >= 900 && __cplusplus >= 201703L includes new.h, else
    old.h (macros NVRTC predefines): new.h is edited."""
    t.write("k.cu", "#if defined(__CUDACC_RTC__) && __CUDA_ARCH__ >= 900 && __cplusplus >= 201703L\n"
            '#include "new.h"\n#else\n#include "old.h"\n#endif\n' + K)
    t.write("new.h", V(1), mtime=OLD)
    t.write("old.h", V(2), mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("new.h", V(3))
    t.check("new.h edited", "k.cu", differs="before")


@stale
def push_pop_macro_include(t):
    """H is "a.h", pushed, redefined "b.h", popped, then #include H: a.h is edited, then b.h (the
    cache must follow whichever NVRTC's #pragma pop_macro leaves)."""
    t.write("k.cu", '#define H "a.h"\n#pragma push_macro("H")\n#undef H\n#define H "b.h"\n'
            '#pragma pop_macro("H")\n#include H\n' + K)
    t.write("a.h", V(1), mtime=OLD)
    t.write("b.h", V(2), mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("a.h", V(3))
    t.check("a.h edited", "k.cu")
    t.edit_keep_stat("b.h", V(4))
    t.check("b.h edited", "k.cu", differs="before")


@stale
def macro_redefined_between_includes(t):
    """#include H twice with H redefined between ("a.h", then "b.h"): b.h is edited."""
    t.write("k.cu", '#define H "a.h"\n#include H\n#undef H\n#define H "b.h"\n#include H\n' + K2)
    t.write("a.h", V(1), mtime=OLD)
    t.write("b.h", V(2, "W"), mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("b.h", V(3, "W"))
    t.check("b.h edited", "k.cu", differs="before")


@stale
def include_directive_spellings(t):
    """Directives spelled as the preprocessor allows: a line continuation inside #include, %:include,
    a comment between # and include, spaces, a comment after the name; each header is edited."""
    t.write("k.cu", '#inc\\\nlude "c1.h"\n%:include "c2.h"\n# /* c */ include "c3.h"\n'
            '  #   include    "c4.h"\n#include /* c */ "c5.h" // c\n'
            'extern "C" __global__ void k(int *o) { o[0] = A1; o[1] = A2; o[2] = A3; o[3] = A4; o[4] = A5; }\n')
    for i in range(1, 6):
        t.write("c%d.h" % i, V(i, "A%d" % i), mtime=OLD)
    t.check("before", "k.cu")
    prev = "before"
    for i in range(1, 6):
        t.edit_keep_stat("c%d.h" % i, V(i + 4, "A%d" % i))
        t.check("c%d.h edited" % i, "k.cu", differs=prev)
        prev = "c%d.h edited" % i


@stale
def line_directive_then_include(t):
    """#line 1 "sub/fake.cu" before #include "h.h" (NVRTC still looks beside k.cu): h.h is edited."""
    t.write("k.cu", '#line 1 "sub/fake.cu"\n' + inc("h.h"))
    t.write("h.h", V(1), mtime=OLD)
    t.write("sub/h.h", V(9), mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("h.h", V(2))
    t.check("h.h edited", "k.cu", differs="before")


# ================================================================ links

ONCE_SRC = ('#include "a.h"\n#define ONCE_SEEN 1\n#include "b.h"\n#ifdef TWICE\n#define V 2\n#else\n#define V 1\n#endif\n'
            + K)
ONCE_H = "#pragma once\n#ifdef ONCE_SEEN\n#define TWICE 1\n#endif\n"


@stale
def pragma_once_hard_link(t):
    """#pragma once skips b.h when it is a hard link of a.h, not when it is a copy: link -> copy ->
    link."""
    t.write("k.cu", ONCE_SRC)
    t.write("a.h", ONCE_H)
    os.link(t.p("a.h"), t.p("b.h"))
    t.check("hard link", "k.cu")
    t.rm("b.h")
    shutil.copy2(t.p("a.h"), t.p("b.h"))
    t.check("copy", "k.cu", differs="hard link")
    t.rm("b.h")
    os.link(t.p("a.h"), t.p("b.h"))
    t.check("hard link again", "k.cu", differs="copy")


@stale
def hard_link_header_replaced_same_stat(t):
    """h.h, a hard link of v1.h, becomes a hard link of v2.h (same size, same mtime): another
    inode under the same name."""
    t.write("k.cu", inc("h.h"))
    t.write("v1.h", V(1), mtime=OLD)
    t.write("v2.h", V(2), mtime=OLD)
    os.link(t.p("v1.h"), t.p("h.h"))
    t.check("before", "k.cu")
    os.link(t.p("v2.h"), t.p("h.h.tmp"))
    os.replace(t.p("h.h.tmp"), t.p("h.h"))
    t.check("h.h = v2.h", "k.cu", differs="before")


@stale
def hard_linked_header_edited_through_other_name(t):
    """h.h and other.h are one inode: other.h is edited in place, size and mtime kept."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1), mtime=OLD)
    os.link(t.p("h.h"), t.p("other.h"))
    t.check("before", "k.cu")
    t.edit_keep_stat("other.h", V(2))
    t.check("other.h edited", "k.cu", differs="before")


@stale
def include_subdir_becomes_file(t):
    """-I a -I b, #include "sub/h.h": the directory a/sub (with h.h) is replaced by a regular file
    named sub, so a/sub/h.h is "not a directory" and b/sub/h.h is the header."""
    t.write("src/k.cu", inc("sub/h.h"))
    t.write("a/sub/h.h", V(1), mtime=OLD)
    t.write("b/sub/h.h", V(2), mtime=OLD)
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    t.rm("a/sub")
    t.write("a/sub", V(1), mtime=OLD)
    t.check("a/sub a file", "src/k.cu", "-I", "a", "-I", "b", differs="before")
    t.rm("a/sub")
    t.write("a/sub/h.h", V(3), mtime=OLD)
    t.check("a/sub a directory again", "src/k.cu", "-I", "a", "-I", "b", differs="a/sub a file")


@stale
def include_dirs_swapped_by_rename(t):
    """-I a: a and b (each with an h.h of the same size and mtime) swap names by rename, their
    mtimes put back."""
    t.write("src/k.cu", inc("h.h"))
    t.write("a/h.h", V(1), mtime=OLD)
    t.write("b/h.h", V(2), mtime=OLD)
    for d in ("a", "b"):
        os.utime(t.p(d), ns=(OLD, OLD))
    t.check("before", "src/k.cu", "-I", "a")
    os.rename(t.p("a"), t.p("tmp"))
    os.rename(t.p("b"), t.p("a"))
    os.rename(t.p("tmp"), t.p("b"))
    t.check("a and b swapped", "src/k.cu", "-I", "a", differs="before")


@stale
def header_appears_dir_mtime_restored(t):
    """-I a -I b: "h.h" was b/h.h; a/h.h is moved in from elsewhere and a's mtime put back (only
    its ctime says it changed)."""
    t.write("src/k.cu", inc("h.h"))
    t.write("b/h.h", V(1), mtime=OLD)
    t.write("elsewhere/h.h", V(2), mtime=OLD)
    t.mkdir("a")
    os.utime(t.p("a"), ns=(OLD, OLD))
    t.check("before", "src/k.cu", "-I", "a", "-I", "b")
    os.rename(t.p("elsewhere/h.h"), t.p("a/h.h"))
    os.utime(t.p("a"), ns=(OLD, OLD))
    t.check("a/h.h moved in", "src/k.cu", "-I", "a", "-I", "b", differs="before")


@stale
def pragma_once_symlink(t):
    """#pragma once with b.h a symbolic link to a.h, then a copy, then a link again."""
    t.write("k.cu", ONCE_SRC)
    t.write("a.h", ONCE_H)
    t.symlink("a.h", "b.h")
    t.check("symlink", "k.cu")
    t.rm("b.h")
    shutil.copy2(t.p("a.h"), t.p("b.h"))
    t.check("copy", "k.cu", differs="symlink")
    t.symlink("a.h", "b.h")
    t.check("symlink again", "k.cu", differs="copy")


@stale
def pragma_once_symlinked_include_dir(t):
    """#pragma once: "x/a.h" and "y/a.h" where y is a link to the directory x (one file), then y
    a copy of x."""
    t.write("k.cu", '#include "x/a.h"\n#define ONCE_SEEN 1\n#include "y/a.h"\n'
            "#ifdef TWICE\n#define V 2\n#else\n#define V 1\n#endif\n" + K)
    t.write("x/a.h", ONCE_H)
    t.symlink("x", "y")
    t.check("y links to x", "k.cu")
    t.rm("y")
    shutil.copytree(t.p("x"), t.p("y"))
    t.check("y a copy", "k.cu", differs="y links to x")


GUARD_H = "#ifndef GUARD_H\n#define GUARD_H\n#ifdef ONCE_SEEN\n#define TWICE 1\n#endif\n#endif\n"


def must_hit_check(t, label, *args, **kw):
    """t.check, and the cached build must be a hit: what changed cannot change the output."""
    b = t.check(label, *args, **kw)
    if b.status != "hit":
        raise Fail("%s: no hit (%s%s), though nothing NVRTC sees changed" % (label, b.status, b.reason()))


@stale
def include_guard_hard_link_becomes_copy(t):
    """Beside pragma_once_hard_link: a.h and b.h have include guards, not #pragma once; b.h, a hard
    link of a.h, becomes a copy, then a link again. The guards make them one either way: a hit."""
    t.write("k.cu", ONCE_SRC)
    t.write("a.h", GUARD_H, mtime=OLD)
    os.link(t.p("a.h"), t.p("b.h"))
    t.check("hard link", "k.cu")
    t.rm("b.h")
    shutil.copy2(t.p("a.h"), t.p("b.h"))
    must_hit_check(t, "copy", "k.cu")
    t.rm("b.h")
    os.link(t.p("a.h"), t.p("b.h"))
    must_hit_check(t, "hard link again", "k.cu")


@stale
def lto_sources_hard_linked_become_copies(t):
    """An LTO module of a.cu and b.cu, one file (hard links), each including "h.h": b.cu becomes a
    copy. Each source is its own NVRTC program, given as text: their identities are nothing to
    #pragma once, so a hit; h.h edited is still a miss."""
    # one instantiation in both programs: nvJitLink keeps one (a kernel of its own in each would clash)
    t.write("a.cu", '#include "h.h"\ntemplate <int N> __global__ void k(int *o) { o[0] = V + N; }\n'
            "template __global__ void k<1>(int *);\n", mtime=OLD)
    t.write("h.h", "#pragma once\n" + V(1), mtime=OLD)
    os.link(t.p("a.cu"), t.p("b.cu"))
    t.check("hard links", "a.cu", "b.cu")
    t.rm("b.cu")
    shutil.copy2(t.p("a.cu"), t.p("b.cu"))
    must_hit_check(t, "b.cu a copy", "a.cu", "b.cu")
    t.write("h.h", "#pragma once\n" + V(2))
    t.check("h.h edited", "a.cu", "b.cu", differs="hard links")


@stale
def header_replaced_by_symlink(t):
    """h.h, a file, is replaced by a symbolic link to other.h (same size, same mtime)."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1), mtime=OLD)
    t.write("other.h", V(2), mtime=OLD)
    t.check("before", "k.cu")
    t.symlink("other.h", "h.h")
    t.check("h.h links to other.h", "k.cu", differs="before")


@stale
def header_symlink_retargeted(t):
    """h.h -> v1.h is retargeted to v2.h (same size, same mtime)."""
    t.write("k.cu", inc("h.h"))
    t.write("v1.h", V(1), mtime=OLD)
    t.write("v2.h", V(2), mtime=OLD)
    t.symlink("v1.h", "h.h")
    t.check("before", "k.cu")
    t.symlink("v2.h", "h.h")
    t.check("h.h -> v2.h", "k.cu", differs="before")


@stale
def include_dir_symlink_retargeted(t):
    """-I inc where inc -> v1 is retargeted to v2 (each with an h.h of the same size and mtime)."""
    t.write("src/k.cu", inc("h.h"))
    t.write("v1/h.h", V(1), mtime=OLD)
    t.write("v2/h.h", V(2), mtime=OLD)
    t.symlink("v1", "inc")
    t.check("before", "src/k.cu", "-I", "inc")
    t.symlink("v2", "inc")
    t.check("inc -> v2", "src/k.cu", "-I", "inc", differs="before")


@stale
def I_dotdot_through_retargeted_symlink(t):
    """-I lib/.. where lib -> x/y (so lib/.. is x, not .): lib is retargeted to z/y."""
    t.write("src/k.cu", inc("h.h"))
    t.write("x/h.h", V(1), mtime=OLD)
    t.write("z/h.h", V(2), mtime=OLD)
    t.write("h.h", V(3), mtime=OLD)
    os.makedirs(t.p("x/y"))
    os.makedirs(t.p("z/y"))
    t.symlink("x/y", "lib")
    t.check("lib -> x/y", "src/k.cu", "-I", "lib/..")
    t.symlink("z/y", "lib")
    t.check("lib -> z/y", "src/k.cu", "-I", "lib/..", differs="lib -> x/y")


@stale
def include_dotdot_through_retargeted_symlink(t):
    """#include "sub/../h.h" where sub -> ../x/y (the file is x/h.h): sub is retargeted to ../z/y."""
    t.write("src/k.cu", inc("sub/../h.h"))
    t.write("x/h.h", V(1), mtime=OLD)
    t.write("z/h.h", V(2), mtime=OLD)
    t.write("src/h.h", V(3), mtime=OLD)
    os.makedirs(t.p("x/y"))
    os.makedirs(t.p("z/y"))
    t.symlink("../x/y", "src/sub")
    t.check("sub -> x/y", "src/k.cu")
    t.symlink("../z/y", "src/sub")
    t.check("sub -> z/y", "src/k.cu", differs="sub -> x/y")


@stale
def source_in_symlinked_dir_dotdot_include(t):
    """s -> real/src; s/k.cu includes "../common/h.h", which is real/common/h.h (not ./common):
    real/common/h.h is edited."""
    t.write("real/src/k.cu", inc("../common/h.h"))
    t.write("real/common/h.h", V(1), mtime=OLD)
    t.write("common/h.h", V(3), mtime=OLD)
    t.symlink("real/src", "s")
    t.check("before", "s/k.cu")
    t.edit_keep_stat("real/common/h.h", V(2))
    t.check("real/common/h.h edited", "s/k.cu", differs="before")
    t.edit_keep_stat("common/h.h", V(4))
    t.check("common/h.h edited", "s/k.cu")


@stale
def source_symlink_includer_dir(t):
    """k.cu is a link to real/k.cu; "h.h" exists beside each: each is edited in turn (NVRTC reads
    one of them; the cache must follow that one)."""
    t.write("real/k.cu", inc("h.h"))
    t.symlink("real/k.cu", "k.cu")
    t.write("h.h", V(1), mtime=OLD)
    t.write("real/h.h", V(2), mtime=OLD)
    t.check("before", "k.cu")
    t.edit_keep_stat("h.h", V(3))
    t.check("./h.h edited", "k.cu")
    t.edit_keep_stat("real/h.h", V(4))
    t.check("real/h.h edited", "k.cu")
    if same_code(t.seen["before"], t.seen["real/h.h edited"]):
        raise Fail("test does not test: neither edit changed the code")


@stale
def source_symlink_retargeted(t):
    """k.cu -> v1/k.cu is retargeted to v2/k.cu: same text, each beside its own h.h."""
    for d, v in (("v1", 1), ("v2", 2)):
        t.write(d + "/k.cu", inc("h.h"), mtime=OLD)
        t.write(d + "/h.h", V(v), mtime=OLD)
    t.symlink("v1/k.cu", "k.cu")
    t.check("k.cu -> v1", "k.cu")
    t.symlink("v2/k.cu", "k.cu")
    t.check("k.cu -> v2", "k.cu")


# ================================================================ the working directory, preludes

@stale
def pre_include_relative_to_cwd(t):
    """-Xnvrtc --pre-include=pre.h names a header relative to the working directory: d1, then d2."""
    t.write("k.cu", K)
    t.write("d1/pre.h", V(1), mtime=OLD)
    t.write("d2/pre.h", V(2), mtime=OLD)
    t.check("from d1", "../k.cu", "-Xnvrtc", "--pre-include=pre.h", cwd="d1")
    t.check("from d2", "../k.cu", "-Xnvrtc", "--pre-include=pre.h", cwd="d2", differs="from d1")


@stale
def pre_include_nested_header(t):
    """The pre-included pre.h includes "inner.h": inner.h is edited, then the build runs from a
    directory whose pre.h has an inner.h of its own."""
    t.write("k.cu", K)
    for d, v in (("d1", 1), ("d2", 3)):
        t.write(d + "/pre.h", '#include "inner.h"\n', mtime=OLD)
        t.write(d + "/inner.h", V(v), mtime=OLD)
    t.check("before", "../k.cu", "-Xnvrtc", "--pre-include=pre.h", cwd="d1")
    t.edit_keep_stat("d1/inner.h", V(2))
    t.check("inner.h edited", "../k.cu", "-Xnvrtc", "--pre-include=pre.h", cwd="d1", differs="before")
    t.check("from d2", "../k.cu", "-Xnvrtc", "--pre-include=pre.h", cwd="d2", differs="inner.h edited")


def prelude_manifest(t, extra=None):
    opts = {"prelude": '#include "pre.h"\n'}
    opts.update(extra or {})
    t.write("p/k.cu", K)
    t.write("p/m.json", json.dumps({"modules": [{"name": "k", "files": ["k.cu"], "options": opts}]}))


@stale
def manifest_prelude_include_relative_to_cwd(t):
    """A manifest's prelude `#include "pre.h"` (an in-memory header: NVRTC looks in the working
    directory): built from d1, then from d2."""
    prelude_manifest(t)
    t.write("d1/pre.h", V(1), mtime=OLD)
    t.write("d2/pre.h", V(2), mtime=OLD)
    t.check("from d1", "--modules", "../p/m.json", cwd="d1", project=True)
    t.check("from d2", "--modules", "../p/m.json", cwd="d2", project=True, differs="from d1")


@stale
def manifest_prelude_header_edited(t):
    """The prelude's pre.h is edited (size and mtime kept)."""
    prelude_manifest(t)
    t.write("d1/pre.h", V(1), mtime=OLD)
    t.check("before", "--modules", "../p/m.json", cwd="d1", project=True)
    t.edit_keep_stat("d1/pre.h", V(2))
    t.check("pre.h edited", "--modules", "../p/m.json", cwd="d1", project=True, differs="before")


@stale
def manifest_prelude_joined_include(t):
    """line_directives false joins the prelude into the source text, so its "pre.h" resolves beside
    the source (p/pre.h), not in the working directory (d1/pre.h): p/pre.h is edited, then deleted."""
    prelude_manifest(t, {"line_directives": False})
    t.write("d1/pre.h", V(1), mtime=OLD)
    t.write("p/pre.h", V(2), mtime=OLD)
    t.check("before", "--modules", "../p/m.json", cwd="d1", project=True)
    t.edit_keep_stat("p/pre.h", V(3))
    t.check("p/pre.h edited", "--modules", "../p/m.json", cwd="d1", project=True, differs="before")
    t.rm("p/pre.h")
    t.check("p/pre.h deleted", "--modules", "../p/m.json", cwd="d1", project=True, may_fail=True)


@stale
def pre_include_spellings_relative_to_cwd(t):
    """NVRTC's other spellings of a pre-include (-include, --pre-include FILE as one word), relative
    to the working directory: each from d1, then d2."""
    t.write("k.cu", K)
    t.write("d1/pre.h", V(1), mtime=OLD)
    t.write("d2/pre.h", V(2), mtime=OLD)
    tried = 0
    for opt in ("-include pre.h", "--pre-include pre.h", "-include=pre.h"):
        fresh = t.build("../k.cu", "-Xnvrtc", opt, cwd="d1", cache=False)
        if failures(fresh.code):
            continue  # a spelling NVRTC does not take
        tried += 1
        t.check("%s from d1" % opt, "../k.cu", "-Xnvrtc", opt, cwd="d1")
        t.check("%s from d2" % opt, "../k.cu", "-Xnvrtc", opt, cwd="d2", differs="%s from d1" % opt)
    if not tried:
        raise Skip("NVRTC took none of the spellings")


# ================================================================ several sources (LTO)

LTO_X = '#include "common.h"\n__device__ int fx() { return CV; }\n'
LTO_Y = '#include "common.h"\n__device__ int fx();\nextern "C" __global__ void k(int *o) { o[0] = fx(); o[1] = CV; }\n'


@stale
def lto_common_h_per_source_dir(t):
    """a/x.cu and b/y.cu, LTO-linked, each include "common.h" from its own directory: b/common.h
    is edited, then a/common.h."""
    t.write("a/x.cu", LTO_X)
    t.write("b/y.cu", LTO_Y)
    t.write("a/common.h", V(1, "CV"), mtime=OLD)
    t.write("b/common.h", V(2, "CV"), mtime=OLD)
    t.check("before", "a/x.cu", "b/y.cu")
    t.edit_keep_stat("b/common.h", V(3, "CV"))
    t.check("b/common.h edited", "a/x.cu", "b/y.cu", differs="before")
    t.edit_keep_stat("a/common.h", V(4, "CV"))
    t.check("a/common.h edited", "a/x.cu", "b/y.cu", differs="b/common.h edited")


@stale
def lto_common_h_created_in_source_dir(t):
    """a/x.cu and b/y.cu include "common.h" found in -I inc; b/common.h is created (for y.cu only)."""
    t.write("a/x.cu", LTO_X)
    t.write("b/y.cu", LTO_Y)
    t.write("inc/common.h", V(1, "CV"))
    t.check("before", "a/x.cu", "b/y.cu", "-I", "inc")
    t.write("b/common.h", V(2, "CV"))
    t.check("b/common.h created", "a/x.cu", "b/y.cu", "-I", "inc", differs="before")


@stale
def lto_same_basename_sources(t):
    """a/k.cu and b/k.cu (one name, two directories), each with its own h.h: b/h.h is edited."""
    t.write("a/k.cu", '#include "h.h"\n__device__ int fx() { return CV; }\n')
    t.write("b/k.cu", '#include "h.h"\n' + LTO_Y.split("\n", 1)[1])
    t.write("a/h.h", V(1, "CV"), mtime=OLD)
    t.write("b/h.h", V(2, "CV"), mtime=OLD)
    t.check("before", "a/k.cu", "b/k.cu")
    t.edit_keep_stat("b/h.h", V(3, "CV"))
    t.check("b/h.h edited", "a/k.cu", "b/k.cu", differs="before")


# ================================================================ checkouts and --base-dir

def checkouts(t, files, edits):
    """X/ holds files (old mtimes); Y/ is a copy of X (mtimes kept) with `edits` made in place,
    each of the same size (mtime kept)."""
    for rel, text in files.items():
        t.write("X/" + rel, text, mtime=OLD)
    shutil.copytree(t.p("X"), t.p("Y"), symlinks=True)
    for rel, text in edits.items():
        t.edit_keep_stat("Y/" + rel, text)


@stale
def base_dir_vendor_header_across_checkouts(t):
    """#include "../vendor/h.h" in two checkouts built with --base-dir: Y's vendor/h.h differs."""
    checkouts(t, {"src/k.cu": inc("../vendor/h.h"), "vendor/h.h": V(1)}, {"vendor/h.h": V(2)})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_includer_dir_across_checkouts(t):
    """GPUJIT_BASE_DIR (the variable) in two checkouts whose k.cu includes its own "h.h": Y's differs."""
    checkouts(t, {"k.cu": inc("h.h"), "h.h": V(1)}, {"h.h": V(2)})
    t.check("checkout X", "k.cu", cwd="X", env=dict(t.env, GPUJIT_BASE_DIR=t.p("X")))
    t.check("checkout Y", "k.cu", cwd="Y", env=dict(t.env, GPUJIT_BASE_DIR=t.p("Y")), differs="checkout X")


@stale
def base_dir_I_dir_links_outside(t):
    """Two checkouts whose inc is a link to a directory outside them (v1, v2), with -I inc."""
    t.write("v1/h.h", V(1), mtime=OLD)
    t.write("v2/h.h", V(2), mtime=OLD)
    for c, v in (("X", "v1"), ("Y", "v2")):
        t.write(c + "/k.cu", inc("h.h"), mtime=OLD)
        t.symlink("../" + v, c + "/inc")
    t.check("checkout X", "--base-dir", t.p("X"), "k.cu", "-I", "inc", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "k.cu", "-I", "inc", cwd="Y", differs="checkout X")


FILE_HASH_K = (FNV + "__device__ unsigned file_hash = fnv(__FILE__);\n"
               'extern "C" __global__ void k(unsigned *o) { o[0] = fnv(__FILE__); o[1] = file_hash; }\n')


@stale
def base_dir_file_hash_across_checkouts(t):
    """A __FILE__-hashed constant (in code and in a __device__ variable's initializer) in two
    checkouts built with --base-dir: the same text names another file."""
    checkouts(t, {"src/k.cu": FILE_HASH_K}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_file_hash_in_header(t):
    """vendor/h.h hashes its own __FILE__ into a constant: two checkouts with --base-dir."""
    checkouts(t, {"src/k.cu": inc("../vendor/h.h", 'extern "C" __global__ void k(unsigned *o) { o[0] = HF; }\n'),
                  "vendor/h.h": FNV + "#define HF fnv(__FILE__)\n"}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_device_assert_across_checkouts(t):
    """A device assert (cuda/std/cassert: its message holds __FILE__, expanded from a toolkit
    macro, not the user's text) in two checkouts built with --base-dir."""
    checkouts(t, {"src/k.cu": '#include <cuda/std/cassert>\n'
                  'extern "C" __global__ void k(int *o) { assert(o[0] != 5); o[1] = 2; }\n'}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_source_location(t):
    """cuda::std::source_location::current().file_name() hashed into the code: two checkouts."""
    checkouts(t, {"src/k.cu": "#include <cuda/std/source_location>\n" + FNV +
                  'extern "C" __global__ void k(unsigned *o)\n'
                  "{ constexpr auto l = cuda::std::source_location::current(); o[0] = fnv(l.file_name()); }\n"}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_file_via_D(t):
    """-D HERE=__FILE__ (the source never spells it), hashed into the code: two checkouts."""
    checkouts(t, {"src/k.cu": FNV + 'extern "C" __global__ void k(unsigned *o) { o[0] = fnv(HERE); }\n'}, {})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "-D", "HERE=__FILE__", "src/k.cu", cwd=c,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_file_via_raw_D(t):
    """-Xnvrtc -DHERE=__FILE__ (NVRTC's own option), hashed into the code: two checkouts."""
    checkouts(t, {"src/k.cu": FNV + 'extern "C" __global__ void k(unsigned *o) { o[0] = fnv(HERE); }\n'}, {})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "-Xnvrtc", "-DHERE=__FILE__", "src/k.cu", cwd=c,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_file_macro_in_prelude(t):
    """A manifest's prelude defines HF as fnv(__FILE__), which k.cu uses (so it names k.cu's path):
    two checkouts, each built with --base-dir."""
    m = {"modules": [{"name": "k", "files": ["k.cu"], "options": {"prelude": FNV + "#define HF fnv(__FILE__)\n"}}]}
    checkouts(t, {"p/k.cu": 'extern "C" __global__ void k(unsigned *o) { o[0] = HF; }\n',
                  "p/m.json": json.dumps(m)}, {})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "--modules", "p/m.json", cwd=c, project=True,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_pre_include_across_checkouts(t):
    """-Xnvrtc --pre-include=pre.h (relative to the working directory, the checkout) in two
    checkouts built with --base-dir: Y's pre.h differs."""
    checkouts(t, {"k.cu": K, "pre.h": V(1)}, {"pre.h": V(2)})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "-Xnvrtc", "--pre-include=pre.h", "k.cu", cwd=c,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_file_macro_in_outside_header(t):
    """A header outside both checkouts (absolute -I) defines HF as fnv(__FILE__), which k.cu uses:
    two checkouts with --base-dir."""
    t.write("shared/h.h", FNV + "#define HF fnv(__FILE__)\n", mtime=OLD)
    checkouts(t, {"k.cu": inc("h.h", 'extern "C" __global__ void k(unsigned *o) { o[0] = HF; }\n')}, {})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "-I", t.p("shared"), "k.cu", cwd=c,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_file_macro_in_toolkit_header(t):
    """The toolkit copy's gj_tk.h defines GJ_HERE as fnv(__FILE__), which k.cu uses (naming k.cu):
    two checkouts with --base-dir, one toolkit."""
    t.toolkit("tk")
    t.write("tk/include/gj_tk.h", FNV + "#define GJ_HERE fnv(__FILE__)\n")
    k = inc("gj_tk.h", 'extern "C" __global__ void k(unsigned *o) { o[0] = GJ_HERE; }\n', angle=True)
    checkouts(t, {"k.cu": k}, {})
    env = dict(t.env, CUDA_PATH=t.p("tk"))
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "k.cu", cwd=c, env=env,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_header_outside_base(t):
    """Two checkouts include one header outside both by an absolute -I: it is edited between."""
    t.write("shared/h.h", V(1), mtime=OLD)
    checkouts(t, {"k.cu": inc("h.h")}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "k.cu", "-I", t.p("shared"), cwd="X")
    t.edit_keep_stat("shared/h.h", V(2))
    t.check("checkout Y", "--base-dir", t.p("Y"), "k.cu", "-I", t.p("shared"), cwd="Y", differs="checkout X")


@stale
def base_dir_header_above_base_dir(t):
    """Checkouts w1/ck and w2/ck (--base-dir each) include "../../shared/h.h": a header outside the
    base directory at the same place relative to it, w1/shared and w2/shared (same size and mtime)."""
    src = inc("../../shared/h.h")
    for w, v in (("w1", 1), ("w2", 2)):
        t.write(w + "/ck/src/k.cu", src, mtime=OLD)
        t.write(w + "/shared/h.h", V(v), mtime=OLD)
    t.check("w1/ck", "--base-dir", t.p("w1/ck"), "src/k.cu", cwd="w1/ck")
    t.check("w2/ck", "--base-dir", t.p("w2/ck"), "src/k.cu", cwd="w2/ck", differs="w1/ck")


def file_hash_checkouts(t, expr):
    k = (FNV + PASTE_CAT + "__device__ unsigned file_hash = fnv(%s);\n"
         'extern "C" __global__ void k(unsigned *o) { o[0] = fnv(%s); o[1] = file_hash; }\n') % (expr, expr)
    checkouts(t, {"src/k.cu": k}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_file_by_token_paste(t):
    """__FILE__ made by token pasting (XCAT(__FI, LE__)), hashed into constants: two checkouts."""
    file_hash_checkouts(t, "XCAT(__FI, LE__)")


@stale
def base_dir_builtin_file(t):
    """__builtin_FILE() hashed into constants: two checkouts with --base-dir."""
    file_hash_checkouts(t, "__builtin_FILE()")


@stale
def base_dir_base_file(t):
    """__BASE_FILE__ hashed into constants: two checkouts with --base-dir."""
    file_hash_checkouts(t, "__BASE_FILE__")


# ================================================================ the toolkit

CCCL_VERSION_H = "include/cccl/cuda/std/__cccl/version.h"


@stale
def toolkit_copy_with_edited_cccl_header(t):
    """CUDA_PATH: the toolkit, then a copy of it (same NVRTC, its include/ a copied tree) whose
    CCCL header cuda/std/__cccl/version.h has another CCCL_VERSION (same size and mtime); then
    that header is edited again in place."""
    real = t.suite.toolkit_root()
    if not os.path.exists(os.path.join(real, CCCL_VERSION_H)):
        raise Skip("the toolkit has no %s" % CCCL_VERSION_H)
    t.write("k.cu", '#include <cuda/std/__cccl/version.h>\nextern "C" __global__ void k(int *o) { o[0] = CCCL_VERSION; }\n')
    T = t.toolkit("tk")
    t.check("the toolkit", "k.cu", env=dict(t.env, CUDA_PATH=real))
    rel = "tk/" + CCCL_VERSION_H
    t.unshare(rel)
    text = open(t.p(rel)).read()
    m = re.search(r"#define CCCL_VERSION (\d+)", text)
    if not m:
        raise Skip("no CCCL_VERSION in %s" % CCCL_VERSION_H)
    n = m.group(1)
    for step, d in (("the copy, CCCL_VERSION edited", "7"), ("edited again", "8")):
        t.edit_keep_stat(rel, text[:m.start(1)] + n[:-1] + d + text[m.end(1):])
        t.check(step, "k.cu", env=dict(t.env, CUDA_PATH=T), differs="the toolkit")


@stale
def toolkit_two_copies_added_header(t):
    """Two copies of the toolkit (same NVRTC) whose include/ hold gj_tk.h with other values (same
    size and mtime), kernels including <gj_tk.h>: built with CUDA_PATH=T1, then T2."""
    t.write("k.cu", inc("gj_tk.h", angle=True))
    for d, v in (("t1", 1), ("t2", 2)):
        t.toolkit(d)
        t.write(d + "/include/gj_tk.h", V(v), mtime=OLD)
    t.check("T1", "k.cu", env=dict(t.env, CUDA_PATH=t.p("t1")))
    t.check("T2", "k.cu", env=dict(t.env, CUDA_PATH=t.p("t2")), differs="T1")


@stale
def toolkit_include_symlink_retargeted(t):
    """The toolkit copy's include is a link to i1, retargeted to i2 (copies differing in gj_tk.h)."""
    t.write("k.cu", inc("gj_tk.h", angle=True))
    T = t.toolkit("tk")
    for d, v in (("i1", 1), ("i2", 2)):
        clone_tree(os.path.join(T, "include"), t.p(d))
        t.write(d + "/gj_tk.h", V(v), mtime=OLD)
    shutil.rmtree(os.path.join(T, "include"))
    env = dict(t.env, CUDA_PATH=T)
    t.symlink("../i1", "tk/include")
    t.check("include -> i1", "k.cu", env=env)
    t.symlink("../i2", "tk/include")
    t.check("include -> i2", "k.cu", env=env, differs="include -> i1")


TK_ONCE_SRC = ('#include "u/gj_once.h"\n#define ONCE_SEEN 1\n#include <gj_once.h>\n'
               "#ifdef TWICE\n#define V 2\n#else\n#define V 1\n#endif\n" + K)


def user_header_linked_to_toolkit(t, text):
    """The toolkit copy's include/gj_once.h and the user's u/gj_once.h, hard links of one file with
    `text`, both included (the user's first): returns the class's environment."""
    T = t.toolkit("tk")
    env = dict(t.env, CUDA_PATH=T)
    t.write("tk/include/gj_once.h", text, mtime=OLD)
    t.write("k.cu", TK_ONCE_SRC)
    t.mkdir("u")
    os.link(t.p("tk/include/gj_once.h"), t.p("u/gj_once.h"))
    return env


@stale
def pragma_once_user_header_linked_to_toolkit(t):
    """#pragma once across the user's headers and the toolkit's: u/gj_once.h is a hard link of the
    toolkit copy's include/gj_once.h, so NVRTC skips <gj_once.h>; it becomes a copy (included
    twice), then a link again."""
    env = user_header_linked_to_toolkit(t, ONCE_H)
    t.check("hard link", "k.cu", env=env)
    t.rm("u/gj_once.h")
    shutil.copy2(t.p("tk/include/gj_once.h"), t.p("u/gj_once.h"))
    t.check("copy", "k.cu", env=env, differs="hard link")
    t.rm("u/gj_once.h")
    os.link(t.p("tk/include/gj_once.h"), t.p("u/gj_once.h"))
    t.check("hard link again", "k.cu", env=env, differs="copy")


def toolkit_header_becomes_link(t, server):
    env = user_header_linked_to_toolkit(t, ONCE_H)
    t.rm("u/gj_once.h")
    shutil.copy2(t.p("tk/include/gj_once.h"), t.p("u/gj_once.h"))
    if server:
        t.env["CUDA_PATH"] = env["CUDA_PATH"]
        env = t.server()
    t.check("copies", "k.cu", env=env)
    if server:
        t.build("k.cu", env=env)  # a hit the server vouched for
    os.link(t.p("u/gj_once.h"), t.p("tk/include/gj_once.h.tmp"))
    os.replace(t.p("tk/include/gj_once.h.tmp"), t.p("tk/include/gj_once.h"))
    t.check("toolkit header a link of the user's", "k.cu", env=env, differs="copies")
    time.sleep(1.1)
    t.check("later", "k.cu", env=env, differs="copies")


@stale
def pragma_once_toolkit_header_linked_to_user(t):
    """The other side: the toolkit copy's include/gj_once.h (#pragma once), a copy of the user's
    u/gj_once.h, is replaced by a hard link of it (the toolkit's record moves, the user's does
    not): then NVRTC skips <gj_once.h>; built again later, when the toolkit's record may have
    taken the new stat."""
    toolkit_header_becomes_link(t, False)


@stale
def pragma_once_toolkit_header_linked_to_user_server(t):
    """The same with a build server vouching for the toolkit's group: it does not vouch for a group
    whose files' identities are not those recorded (the client checks them against its own)."""
    toolkit_header_becomes_link(t, True)


@stale
def include_guard_user_header_linked_to_toolkit(t):
    """Beside pragma_once_user_header_linked_to_toolkit, with include guards instead of #pragma
    once: the link becoming a copy cannot change what NVRTC makes, so a hit."""
    env = user_header_linked_to_toolkit(t, GUARD_H)
    t.check("hard link", "k.cu", env=env)
    t.rm("u/gj_once.h")
    shutil.copy2(t.p("tk/include/gj_once.h"), t.p("u/gj_once.h"))
    must_hit_check(t, "copy", "k.cu", env=env)


@stale
def toolkit_header_shadowed_by_user_dir(t):
    """<gj_tk.h> comes from the toolkit copy's include/; then gj_tk.h is created in the user's -I inc
    (and the cache must follow whichever NVRTC takes)."""
    t.write("k.cu", inc("gj_tk.h", angle=True))
    t.toolkit("tk")
    t.write("tk/include/gj_tk.h", V(1))
    env = dict(t.env, CUDA_PATH=t.p("tk"))
    t.mkdir("inc")
    t.check("before", "k.cu", "-I", "inc", env=env)
    t.write("inc/gj_tk.h", V(2))
    t.check("inc/gj_tk.h created", "k.cu", "-I", "inc", env=env)


def ptxas_wrapper(real, opt, pad):
    return "#!/bin/sh\n# %s\nexec '%s' %s \"$@\"\n" % ("#" * pad, real, opt)


@stale
def toolkit_ptxas_replaced_same_size_mtime(t):
    """The toolkit copy's bin/ptxas, a wrapper script of the real one with -O3, is rewritten in
    place to pass -O0 instead (same size, mtime put back)."""
    real = os.path.join(t.suite.toolkit_root(), "bin", "ptxas")
    t.write("k.cu", "#define V 3\n" + LOOP)
    T = t.toolkit("tk")
    os.unlink(os.path.join(T, "bin", "ptxas"))
    t.write("tk/bin/ptxas", ptxas_wrapper(real, "-O3", 8), mtime=OLD)
    os.chmod(t.p("tk/bin/ptxas"), 0o755)
    env = dict(t.env, CUDA_PATH=T)
    t.check("ptxas -O3", "k.cu", env=env)
    t.edit_keep_stat("tk/bin/ptxas", ptxas_wrapper(real, "-O0", 8))
    t.check("ptxas -O0, size and mtime kept", "k.cu", env=env, differs="ptxas -O3")


@stale
def toolkit_ptxas_symlink_retargeted(t):
    """The toolkit copy's bin/ptxas is a link to wrapper a (-O3), retargeted to wrapper b (-O0) of
    the same size and mtime."""
    real = os.path.join(t.suite.toolkit_root(), "bin", "ptxas")
    t.write("k.cu", "#define V 3\n" + LOOP)
    T = t.toolkit("tk")
    for n, o in (("a", "-O3"), ("b", "-O0")):
        t.write("w/ptxas-" + n, ptxas_wrapper(real, o, 8), mtime=OLD)
        os.chmod(t.p("w/ptxas-" + n), 0o755)
    env = dict(t.env, CUDA_PATH=T)
    t.symlink(t.p("w/ptxas-a"), "tk/bin/ptxas")
    t.check("ptxas -> a", "k.cu", env=env)
    t.symlink(t.p("w/ptxas-b"), "tk/bin/ptxas")
    t.check("ptxas -> b", "k.cu", env=env, differs="ptxas -> a")


@stale
def toolkit_root_symlink_retargeted(t):
    """CUDA_PATH names a link, tk -> t1, retargeted to t2 (copies whose gj_tk.h differ)."""
    t.write("k.cu", inc("gj_tk.h", angle=True))
    for d, v in (("t1", 1), ("t2", 2)):
        t.toolkit(d)
        t.write(d + "/include/gj_tk.h", V(v), mtime=OLD)
    env = dict(t.env, CUDA_PATH=t.p("tk"))
    t.symlink("t1", "tk")
    t.check("tk -> t1", "k.cu", env=env)
    t.symlink("t2", "tk")
    t.check("tk -> t2", "k.cu", env=env, differs="tk -> t1")


@stale
def toolkit_relative_CUDA_PATH_two_cwds(t):
    """CUDA_PATH=tk, a relative path: d1/tk and d2/tk are copies of the toolkit whose gj_tk.h
    differ; built from d1, then d2."""
    t.write("k.cu", inc("gj_tk.h", angle=True))
    for d, v in (("d1", 1), ("d2", 2)):
        t.toolkit(d + "/tk")
        t.write(d + "/tk/include/gj_tk.h", V(v), mtime=OLD)
    env = dict(t.env, CUDA_PATH="tk")
    t.check("from d1", "../k.cu", cwd="d1", env=env)
    t.check("from d2", "../k.cu", cwd="d2", env=env, differs="from d1")


@stale
def toolkit_header_includes_user_header(t):
    """The toolkit copy's gj_tk.h includes <gj_user.h>, found in the user's -I inc: it is edited."""
    t.write("k.cu", inc("gj_tk.h", angle=True))
    t.toolkit("tk")
    t.write("tk/include/gj_tk.h", "#include <gj_user.h>\n")
    t.write("inc/gj_user.h", V(1), mtime=OLD)
    env = dict(t.env, CUDA_PATH=t.p("tk"))
    t.check("before", "k.cu", "-I", "inc", env=env)
    t.edit_keep_stat("inc/gj_user.h", V(2))
    t.check("inc/gj_user.h edited", "k.cu", "-I", "inc", env=env, differs="before")


TK_HAS_USER = "#if __has_include(<gj_user.h>)\n#include <gj_user.h>\n#else\n#define V 1\n#endif\n"


@stale
def toolkit_header_has_include_user_header(t):
    """The toolkit copy's gj_tk.h tests __has_include(<gj_user.h>) (false); gj_user.h is created in
    the user's -I inc."""
    t.write("k.cu", inc("gj_tk.h", angle=True))
    t.toolkit("tk")
    t.write("tk/include/gj_tk.h", TK_HAS_USER)
    t.mkdir("inc")
    env = dict(t.env, CUDA_PATH=t.p("tk"))
    t.check("before", "k.cu", "-I", "inc", env=env)
    t.write("inc/gj_user.h", V(2))
    t.check("inc/gj_user.h created", "k.cu", "-I", "inc", env=env, differs="before")


@stale
def server_toolkit_header_has_include_user_header(t):
    """With a build server vouching for the toolkit's headers: the toolkit copy's gj_tk.h tests
    __has_include(<gj_user.h>); gj_user.h is created in the user's -I inc, then edited."""
    t.write("k.cu", inc("gj_tk.h", angle=True))
    t.toolkit("tk")
    t.write("tk/include/gj_tk.h", TK_HAS_USER)
    t.mkdir("inc")
    t.env["CUDA_PATH"] = t.p("tk")
    env = t.server()
    t.check("before", "k.cu", "-I", "inc", env=env)
    t.build("k.cu", "-I", "inc", env=env)  # a hit the server vouched for
    t.write("inc/gj_user.h", V(2), mtime=OLD)
    t.check("inc/gj_user.h created", "k.cu", "-I", "inc", env=env, differs="before")
    t.edit_keep_stat("inc/gj_user.h", V(3))
    t.check("inc/gj_user.h edited", "k.cu", "-I", "inc", env=env, differs="inc/gj_user.h created")


# ================================================================ other filesystems

def ext2_image(t, name, files):
    """An ext2 image t.p(name + ".img") holding `files` ({name: text}), each stamped 2020-01-01
    00:00:00 (mtime and ctime, whole seconds): images made alike hold files of equal inode, size
    and times, whatever their content."""
    for tool in ("mkfs.ext2", "debugfs", "unshare", "mount"):
        if not shutil.which(tool):
            raise Skip("no %s to make and mount filesystem images" % tool)
    src, img = t.p(name + ".d"), t.p(name + ".img")
    for rel, text in files.items():
        t.write(os.path.join(name + ".d", rel), text)
    with open(img, "wb") as f:
        f.truncate(1 << 20)
    steps = [["mkfs.ext2", "-q", "-F", "-I", "128", "-d", src, img]]
    steps += [["debugfs", "-w", "-R", "sif /%s %s 20200101000000" % (rel, field), img]
              for rel in files for field in ("mtime", "ctime")]
    for argv in steps:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise Skip("%s failed: %s" % (argv[0], r.stderr.decode().strip()[-200:]))
    return img


def mounted(t, mount_point, *imgs):
    """Every gpujit run from now on in a private mount namespace of its own, with imgs loop-mounted
    read-only at mount_point, each over the one before; Skip where this machine cannot."""
    at = shlex.quote(t.p(mount_point))
    script = " && ".join("mount -o loop,ro %s %s" % (shlex.quote(i), at) for i in imgs)
    wrap = ["unshare", "-m", "--propagation", "private", "sh", "-c", script + ' && exec "$0" "$@"']
    r = subprocess.run(wrap + ["true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise Skip("cannot loop-mount an image in a private mount namespace here: %s"
                   % (r.stderr.decode().strip()[-200:] or "exit %d" % r.returncode))
    t.wrap = wrap


@stale
def header_on_filesystem_mounted_over(t):
    """-I m, m an ext2 image's mount holding h.h; another image is mounted over it whose h.h has
    the same inode, size, mtime and ctime and another content: only the device tells them apart.
    Then a third, a copy of the first, over both: another device, the first's content — a hit."""
    imgs = [ext2_image(t, n, {"h.h": V(v)}) for n, v in (("a", 1), ("b", 2), ("c", 1))]
    t.write("k.cu", inc("h.h"))
    t.mkdir("m")
    mounted(t, "m", imgs[0])
    t.check("image a", "k.cu", "-I", "m")
    mounted(t, "m", *imgs[:2])
    t.check("image b over a", "k.cu", "-I", "m", differs="image a")
    mounted(t, "m", *imgs)
    must_hit_check(t, "image c (a copy of a) over b", "k.cu", "-I", "m")


# ================================================================ changes during the compile

LATE_SRC = ('#include "a.h"\n#if __has_include("late.h")\n#include "late.h"\n#else\n#define W 0\n#endif\n'
            '#include "z.h"\n' + K2)


def during(t, watch, nth, change, restore, args=("k.cu",)):
    """Build through the cache while `change` happens right after the nth read of `watch`; then
    build twice more, the files as `change` left them and as `restore` puts them back: neither may
    be served what the first build stored, unless that is right."""
    w = AfterRead(t.p(watch), nth, change)
    first = t.build(*args)
    if not w.done():
        raise Fail("test does not test: %s was read %d times, not %d" % (watch, w.reads, nth))
    if first.status == "failed":
        raise Fail("the build during the change failed: %s" % first.code[1])
    t.seen["during"] = first.code
    t.check("as changed", *args)
    restore()
    t.check("restored", *args)
    if same_code(t.seen["as changed"], t.seen["restored"]):
        raise Fail("test does not test: the change made no difference")


@stale
def during_compile_edit_before_nvrtc_reads(t):
    """a.h is edited (same size, mtime kept) right after the include scan read it, before NVRTC
    reads it; then put back: the entry stored must not serve the other content's code."""
    t.write("k.cu", inc("a.h"))
    t.write("a.h", V(1), mtime=OLD)
    during(t, "a.h", 1, lambda: t.edit_keep_stat("a.h", V(2)), lambda: t.edit_keep_stat("a.h", V(1)))


@stale
def during_compile_edit_after_nvrtc_read(t):
    """a.h is edited (same size, mtime kept) right after its second read (NVRTC's), while the
    compile goes on; then put back."""
    t.write("k.cu", inc("a.h"))
    t.write("a.h", V(1), mtime=OLD)
    during(t, "a.h", 2, lambda: t.edit_keep_stat("a.h", V(2)), lambda: t.edit_keep_stat("a.h", V(1)))


@stale
def during_compile_header_created(t):
    """late.h (tested with __has_include after a.h) is created once the scan has passed it (it has
    read z.h, the last include), before NVRTC looks; then deleted again."""
    t.write("k.cu", LATE_SRC)
    t.write("a.h", V(1))
    t.write("z.h", "\n")
    during(t, "z.h", 1, lambda: t.write("late.h", V(5, "W")), lambda: t.rm("late.h"))


@stale
def during_compile_header_deleted(t):
    """late.h exists when the scan passes it and is deleted before NVRTC looks; then created again."""
    t.write("k.cu", LATE_SRC)
    t.write("a.h", V(1))
    t.write("z.h", "\n")
    t.write("late.h", V(5, "W"), mtime=OLD)
    during(t, "z.h", 1, lambda: t.rm("late.h"), lambda: t.write("late.h", V(5, "W"), mtime=OLD))


def slow_header(n=1500):
    return "".join("template <int N> __device__ int f%d(int x) { return x * N + %d; }\n"
                   "template __device__ int f%d<%d>(int);\n" % (i, i, i, i) for i in range(n))


@stale
def during_compile_slow_timed_edit(t):
    """A header-heavy compile (big.h first); a thread edits a.h, included after big.h, 50 ms after
    the build starts (same size, mtime kept): NVRTC reads it late; then a.h is put back."""
    t.write("k.cu", '#include "big.h"\n' + inc("a.h"))
    t.write("big.h", slow_header())
    t.write("a.h", V(1), mtime=OLD)
    timer = threading.Timer(0.05, lambda: t.edit_keep_stat("a.h", V(2)))
    timer.start()
    first = t.build("k.cu")
    timer.join()
    if first.status == "failed":
        raise Fail("the build during the change failed: %s" % first.code[1])
    t.seen["during"] = first.code
    t.check("as changed", "k.cu")
    t.edit_keep_stat("a.h", V(1))
    t.check("restored", "k.cu", differs="as changed")


# ================================================================ the build server and PCHs

def body(m, extra=""):
    return 'extern "C" __global__ void k(int *o) { o[0] = V * %d; %s}\n' % (m, extra)


def module_pch(b):
    mods = b.doc.get("modules") or [{}]
    return mods[0].get("pch", "?")


def server_pch(t, head, change, label, args=(), text=K, need_pch=True):
    """A build server runs: src/k1.cu makes the PCH of the include block `head` in the server's
    worker, src/k2.cu (the same text) uses it (`need_pch`: else the class tests nothing); then
    `change`, and src/k3.cu (the same text) is built."""
    env = t.server()
    for i in (1, 2, 3):
        t.write("src/k%d.cu" % i, head + text)
    t.check("k1", "src/k1.cu", *args, env=env)
    if t.server_status().get("built", 0) < 1:
        raise Skip("the build server did not build the miss")
    b = t.check("k2", "src/k2.cu", *args, env=env)
    if need_pch and module_pch(b) != "used":
        raise Fail("test does not test: k2 did not use the server's PCH (pch %s: %s)"
                   % (module_pch(b), (b.doc.get("modules") or [{}])[0].get("pch_reason")))
    change()
    b = t.check(label, "src/k3.cu", *args, env=env, differs="k2")
    return b


@stale
def server_pch_header_in_earlier_I_dir(t):
    """A build server's worker holds the PCH of `#include "h.h"` (b/h.h, with -I a -I b); a/h.h is
    created and a third module of the same block is built."""
    t.write("b/h.h", V(1))
    t.mkdir("a")
    server_pch(t, '#include "h.h"\n', lambda: t.write("a/h.h", V(5)), "a/h.h created", ("-I", "a", "-I", "b"))


@stale
def server_pch_has_include_turns_true(t):
    """A build server's worker holds the PCH of a block testing __has_include("opt.h") (false); opt.h
    is created beside the sources and a third module of the block is built."""
    t.write("src/h.h", V(1))
    head = '#include "h.h"\n#if __has_include("opt.h")\n#include "opt.h"\n#else\n#define W 0\n#endif\n'
    server_pch(t, head, lambda: t.write("src/opt.h", V(7, "W")), "opt.h created", text=K2)


@stale
def server_pch_header_edited_same_size_mtime(t):
    """A build server's worker holds the PCH of `#include "h.h"`; h.h is edited in place (same size,
    mtime kept) and a third module of the block is built."""
    t.write("src/h.h", V(1), mtime=OLD)
    server_pch(t, '#include "h.h"\n', lambda: t.edit_keep_stat("src/h.h", V(5)), "h.h edited")


@stale
def server_pch_include_next_dir_between(t):
    """A build server builds modules whose block is <h.h> (A/h.h, whose #include_next found C/h.h;
    a PCH where the server makes one); B/h.h is created and a third module of the block is built."""
    t.write("A/h.h", "#include_next <h.h>\n")
    t.write("C/h.h", V(1))
    t.mkdir("B")
    server_pch(t, "#include <h.h>\n", lambda: t.write("B/h.h", V(5)), "B/h.h created",
               ("-I", "A", "-I", "B", "-I", "C"), need_pch=False)


@stale
def server_pch_block_header_again_by_hard_link(t):
    """A build server's worker makes the PCH of `#include "h.h"` (h.h with #pragma once) for k1 and
    would use it for k2; both include h.h again after the block through a hard link, h2.h, which
    NVRTC reads a second time when it uses a PCH and skips without one. k2's entry is then read
    by a build of its own."""
    env = t.server()
    t.write("src/h.h", "#pragma once\n#ifdef H_SEEN\n#define H_TWICE 1\n#endif\n#define H_SEEN 1\n")
    os.link(t.p("src/h.h"), t.p("src/h2.h"))
    text = ('#include "h.h"\ntypedef int code_begins;\n#include "h2.h"\n'
            '#ifdef H_TWICE\n#define V 2\n#else\n#define V 1\n#endif\n' + K)
    for i in (1, 2):
        t.write("src/k%d.cu" % i, text)
    t.check("k1", "src/k1.cu", env=env)
    if t.server_status().get("built", 0) < 1:
        raise Skip("the build server did not build the miss")
    t.check("k2", "src/k2.cu", env=env)


@stale
def server_hit_after_header_symlink_retargeted(t):
    """With a server running (hits served by the client), h.h -> v1.h is retargeted to v2.h."""
    env = t.server()
    t.write("src/k.cu", inc("h.h"))
    t.write("src/v1.h", V(1), mtime=OLD)
    t.write("src/v2.h", V(2), mtime=OLD)
    t.symlink("v1.h", "src/h.h")
    t.check("before", "src/k.cu", env=env)
    t.build("src/k.cu", env=env)
    t.symlink("v2.h", "src/h.h")
    t.check("h.h -> v2.h", "src/k.cu", env=env, differs="before")


def project(t, n=3, head='#include "common.h"\n'):
    for i in range(n):
        t.write("p/k%d.cu" % i, head + 'extern "C" __global__ void k%d(int *o) { o[0] = V + %d; }\n' % (i, i))


@stale
def server_project_header_in_earlier_I_dir(t):
    """A project build (-j 2) through a build server, whose workers keep PCHs between builds:
    a/common.h is created before b/common.h on the path and one module's body edited."""
    env = t.server()
    project(t)
    t.write("b/common.h", V(1))
    t.mkdir("a")
    args = ("-j", "2", "--pch", "-I", "a", "-I", "b", "p")
    t.check("first", *args, env=env, project=True)
    t.write("p/k0.cu", '#include "common.h"\nextern "C" __global__ void k0(int *o) { o[0] = V + 10; }\n')
    t.check("k0 edited", *args, env=env, project=True, differs="first")
    t.write("a/common.h", V(5))
    t.write("p/k0.cu", '#include "common.h"\nextern "C" __global__ void k0(int *o) { o[0] = V + 20; }\n')
    t.check("a/common.h created", *args, env=env, project=True, differs="k0 edited")


@stale
def server_raw_relative_options_from_two_cwds(t):
    """With a build server (whose worker has its own working directory): -Xnvrtc --pre-include=pre.h
    and -Xnvrtc -Iinc, relative to the client's working directory, from d1 and then d2."""
    env = t.server()
    t.write("k.cu", inc("h.h", angle=True, body=K2))
    for d, v in (("d1", 1), ("d2", 2)):
        t.write(d + "/pre.h", V(v, "W"), mtime=OLD)
        t.write(d + "/inc/h.h", V(v), mtime=OLD)
    args = ("../k.cu", "-Xnvrtc", "--pre-include=pre.h", "-Xnvrtc", "-Iinc")
    t.check("from d1", *args, cwd="d1", env=env)
    t.check("from d2", *args, cwd="d2", env=env, differs="from d1")


@stale
def server_manifest_prelude_relative_to_cwd(t):
    """With a build server: a manifest's prelude `#include "pre.h"` (NVRTC looks in the working
    directory, the client's) from d1, then d2."""
    env = t.server()
    prelude_manifest(t)
    t.write("d1/pre.h", V(1), mtime=OLD)
    t.write("d2/pre.h", V(2), mtime=OLD)
    t.check("from d1", "--modules", "../p/m.json", cwd="d1", project=True, env=env)
    t.check("from d2", "--modules", "../p/m.json", cwd="d2", project=True, env=env, differs="from d1")


@stale
def server_base_dir_checkouts(t):
    """With a build server: two checkouts (--base-dir) whose vendor/h.h differ, and a module hashing
    __FILE__ into its code; each built in X, then in Y."""
    env = t.server()
    checkouts(t, {"src/k.cu": inc("../vendor/h.h"), "vendor/h.h": V(1), "src/f.cu": FILE_HASH_K},
              {"vendor/h.h": V(2)})
    for c in ("X", "Y"):
        t.check("k.cu in " + c, "--base-dir", t.p(c), "src/k.cu", cwd=c, env=env,
                differs="k.cu in X" if c == "Y" else None)
        t.check("f.cu in " + c, "--base-dir", t.p(c), "src/f.cu", cwd=c, env=env,
                differs="f.cu in X" if c == "Y" else None)


# ================================================================ project builds

@stale
def project_manifest_j2_header_edited(t):
    """--modules m.json, -j 2: three modules include p/inc/common.h (an include_dirs entry), which
    is edited in place (same size, mtime kept)."""
    project(t)
    t.write("p/inc/common.h", V(1), mtime=OLD)
    t.write("p/m.json", json.dumps({"modules": [{"name": "k%d" % i, "files": ["k%d.cu" % i],
                                                 "options": {"include_dirs": [t.p("p/inc")]}} for i in range(3)]}))
    t.check("before", "-j", "2", "--modules", "p/m.json", project=True)
    t.edit_keep_stat("p/inc/common.h", V(2))
    t.check("common.h edited", "-j", "2", "--modules", "p/m.json", project=True, differs="before")


@stale
def project_dir_j2_header_in_earlier_I_dir(t):
    """gpujit build -j 2 -I a -I b p/: the modules' "common.h" was b's; a/common.h is created."""
    project(t)
    t.write("b/common.h", V(1))
    t.mkdir("a")
    args = ("-j", "2", "-I", "a", "-I", "b", "p")
    t.check("before", *args, project=True)
    t.write("a/common.h", V(2))
    t.check("a/common.h created", *args, project=True, differs="before")


@stale
def project_manifest_from_another_cwd(t):
    """A manifest's relative include_dirs ["inc"], with an inc/common.h beside the manifest and in
    the working directories d1 and d2: built from d1, from d2, then the manifest's one edited (the
    cache must follow whichever NVRTC is given)."""
    project(t)
    for d, v in (("p", 1), ("d1", 2), ("d2", 3)):
        t.write(d + "/inc/common.h", V(v), mtime=OLD)
    t.write("p/m.json", json.dumps({"modules": [{"name": "k%d" % i, "files": ["k%d.cu" % i],
                                                 "options": {"include_dirs": ["inc"]}} for i in range(3)]}))
    t.check("from d1", "-j", "2", "--modules", "../p/m.json", cwd="d1", project=True)
    t.check("from d2", "-j", "2", "--modules", "../p/m.json", cwd="d2", project=True)
    t.edit_keep_stat("p/inc/common.h", V(4))
    t.check("p/inc/common.h edited", "-j", "2", "--modules", "../p/m.json", cwd="d2", project=True)
    if same_code(t.seen["from d1"], t.seen["p/inc/common.h edited"]):
        raise Fail("test does not test: no step changed the code")


@stale
def project_base_dir_checkouts(t):
    """gpujit build -j 2 --base-dir in two checkouts of a project: modules including
    "../vendor/h.h" (Y's differs) and one hashing __FILE__."""
    checkouts(t, {"p/k0.cu": inc("../vendor/h.h"), "p/k1.cu": inc("../vendor/h.h"), "vendor/h.h": V(1),
                  "p/f.cu": FILE_HASH_K}, {"vendor/h.h": V(2)})
    t.check("checkout X", "-j", "2", "--base-dir", t.p("X"), "p", cwd="X", project=True)
    t.check("checkout Y", "-j", "2", "--base-dir", t.p("Y"), "p", cwd="Y", project=True, differs="checkout X")


@stale
def project_pch_header_edited(t):
    """A project build with --pch -j 1 (one worker makes and uses the PCH of the modules' block):
    common.h is edited in place (same size, mtime kept) and the build run again."""
    project(t)
    t.write("p/common.h", V(1), mtime=OLD)
    t.check("before", "-j", "1", "--pch", "p", project=True)
    t.edit_keep_stat("p/common.h", V(2))
    t.check("common.h edited", "-j", "1", "--pch", "p", project=True, differs="before")


def manifest(t, mods):
    t.write("p/m.json", json.dumps({"modules": mods}))


@stale
def project_pch_modules_with_other_include_dirs(t):
    """One worker (--pch -j 1), modules of one include block `#include "h.h"` in one directory whose
    manifest include_dirs differ (i1, i2, i1): each must read its own h.h, PCH or not."""
    for i in range(3):
        t.write("p/k%d.cu" % i, inc("h.h"))
    t.write("i1/h.h", V(1))
    t.write("i2/h.h", V(2))
    manifest(t, [{"name": "k%d" % i, "files": ["k%d.cu" % i], "options": {"include_dirs": [t.p(d)]}}
                 for i, d in enumerate(("i1", "i2", "i1"))])
    t.check("built", "-j", "1", "--pch", "--modules", "p/m.json", project=True)
    t.write("i2/h.h", V(3))
    t.check("i2/h.h edited", "-j", "1", "--pch", "--modules", "p/m.json", project=True, differs="built")


@stale
def project_pch_modules_with_other_defines(t):
    """One worker (--pch -j 1), modules of one include block `#include "h.h"` where h.h reads a
    macro the manifest defines per module (FAST=1, FAST=0, FAST=1)."""
    for i in range(3):
        t.write("p/k%d.cu" % i, inc("h.h"))
    t.write("p/h.h", "#if FAST\n#define V 1\n#else\n#define V 2\n#endif\n")
    manifest(t, [{"name": "k%d" % i, "files": ["k%d.cu" % i], "options": {"defines": ["FAST=%d" % f]}}
                 for i, f in enumerate((1, 0, 1))])
    t.check("built", "-j", "1", "--pch", "--modules", "p/m.json", project=True)
    t.write("p/h.h", "#if FAST\n#define V 3\n#else\n#define V 2\n#endif\n")
    t.check("h.h edited", "-j", "1", "--pch", "--modules", "p/m.json", project=True, differs="built")


@stale
def project_pch_same_block_other_dirs(t):
    """One worker (--pch -j 1), p/a/k*.cu and p/b/k*.cu with one block `#include "common.h"` that
    resolves per directory; then b/common.h is edited (size and mtime kept)."""
    for d, v in (("a", 1), ("b", 2)):
        for i in range(2):
            t.write("p/%s/k%d.cu" % (d, i), inc("common.h"))
        t.write("p/%s/common.h" % d, V(v), mtime=OLD)
    t.check("built", "-j", "1", "--pch", "p", project=True)
    t.edit_keep_stat("p/b/common.h", V(3))
    t.check("b/common.h edited", "-j", "1", "--pch", "p", project=True, differs="built")


# ================================================================ the cache moved: export, import, remote

def must_hit(t, what, *args, cwd=None, env=None):
    """The cache moved (imported, or a remote store) must serve an unchanged build: else the class
    would pass without testing the move."""
    b = t.build(*args, cwd=cwd, env=env)
    if b.status != "hit":
        raise Fail("test does not test: %s was no hit (%s%s)" % (what, b.status, b.reason()))


@stale
def export_import_then_header_edited(t):
    """cache A is exported and imported into an empty cache B; h.h is edited; built with B."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1), mtime=OLD)
    t.check("before", "k.cu")
    r = t.gpujit("cache", "--cache-dir", t.cache, "export", t.p("x.tar"))
    if r.returncode != 0:
        raise Skip("cache export failed: %s" % r.stderr.decode().strip()[-200:])
    b = t.p("cacheB")
    r = t.gpujit("cache", "--cache-dir", b, "import", t.p("x.tar"))
    if r.returncode != 0:
        raise Fail("cache import failed: %s" % r.stderr.decode().strip()[-200:])
    must_hit(t, "cache B before the edit", "k.cu", env=dict(t.env, GPUJIT_CACHE_DIR=b))
    t.edit_keep_stat("h.h", V(2))
    t.check("h.h edited, cache B", "k.cu", env=dict(t.env, GPUJIT_CACHE_DIR=b), differs="before")


@stale
def export_import_other_checkout(t):
    """Checkout X's cache, exported and imported into an empty cache B, used in checkout Y (with
    --base-dir) whose vendor/h.h differs."""
    checkouts(t, {"src/k.cu": inc("../vendor/h.h"), "vendor/h.h": V(1)}, {"vendor/h.h": V(2)})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    r = t.gpujit("cache", "--cache-dir", t.cache, "export", t.p("x.tar"))
    if r.returncode != 0:
        raise Skip("cache export failed: %s" % r.stderr.decode().strip()[-200:])
    b = t.p("cacheB")
    t.gpujit("cache", "--cache-dir", b, "import", t.p("x.tar"))
    must_hit(t, "cache B in checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X", env=dict(t.env, GPUJIT_CACHE_DIR=b))
    t.check("checkout Y, cache B", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y",
            env=dict(t.env, GPUJIT_CACHE_DIR=b), differs="checkout X")


@stale
def remote_http_header_edited(t):
    """An HTTP store on loopback (GET/PUT, served here): machine A stores; h.h is edited; machine B,
    an empty local cache, builds with the same store."""
    _srv, url = http_store(t)
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1), mtime=OLD)
    t.check("machine A", "k.cu", "--remote-cache", url)
    must_hit(t, "an empty cache C with the store", "k.cu", "--remote-cache", url,
             env=dict(t.env, GPUJIT_CACHE_DIR=t.p("cacheC")))
    t.edit_keep_stat("h.h", V(2))
    t.check("h.h edited, machine B", "k.cu", "--remote-cache", url,
            env=dict(t.env, GPUJIT_CACHE_DIR=t.p("cacheB")), differs="machine A")


@stale
def remote_http_other_checkout(t):
    """An HTTP store on loopback: checkout X (machine A) stores; checkout Y, whose vendor/h.h
    differs, builds on machine B with --base-dir."""
    _srv, url = http_store(t)
    checkouts(t, {"src/k.cu": inc("../vendor/h.h"), "vendor/h.h": V(1)}, {"vendor/h.h": V(2)})
    t.check("checkout X", "--base-dir", t.p("X"), "--remote-cache", url, "src/k.cu", cwd="X")
    must_hit(t, "checkout X with an empty cache C and the store", "--base-dir", t.p("X"), "--remote-cache", url,
             "src/k.cu", cwd="X", env=dict(t.env, GPUJIT_CACHE_DIR=t.p("cacheC")))
    t.check("checkout Y, machine B", "--base-dir", t.p("Y"), "--remote-cache", url, "src/k.cu", cwd="Y",
            env=dict(t.env, GPUJIT_CACHE_DIR=t.p("cacheB")), differs="checkout X")


@stale
def remote_redis_header_edited(t):
    """A redis-server on loopback (when installed): machine A stores; h.h is edited; machine B builds."""
    exe = shutil.which("redis-server")
    if not exe:
        raise Skip("redis-server is not installed (the HTTP store classes run without it)")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=t.dir)
    t.cleanups.append(lambda: (proc.terminate(), proc.wait(5)))
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            break
        except OSError:
            time.sleep(0.1)
    url = "redis://127.0.0.1:%d/0" % port
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1), mtime=OLD)
    t.check("machine A", "k.cu", "--remote-cache", url)
    must_hit(t, "an empty cache C with the store", "k.cu", "--remote-cache", url,
             env=dict(t.env, GPUJIT_CACHE_DIR=t.p("cacheC")))
    t.edit_keep_stat("h.h", V(2))
    t.check("h.h edited, machine B", "k.cu", "--remote-cache", url,
            env=dict(t.env, GPUJIT_CACHE_DIR=t.p("cacheB")), differs="machine A")


@stale
def export_import_file_hash_other_checkout(t):
    """A __FILE__-hashed module of checkout X, exported and imported into cache B, built in checkout
    Y (--base-dir) with B."""
    checkouts(t, {"src/k.cu": FILE_HASH_K}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    r = t.gpujit("cache", "--cache-dir", t.cache, "export", t.p("x.tar"))
    if r.returncode != 0:
        raise Skip("cache export failed: %s" % r.stderr.decode().strip()[-200:])
    b = t.p("cacheB")
    t.gpujit("cache", "--cache-dir", b, "import", t.p("x.tar"))
    must_hit(t, "cache B in checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X", env=dict(t.env, GPUJIT_CACHE_DIR=b))
    t.check("checkout Y, cache B", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y",
            env=dict(t.env, GPUJIT_CACHE_DIR=b), differs="checkout X")


@stale
def remote_http_file_hash_other_checkout(t):
    """An HTTP store on loopback: a __FILE__-hashed module of checkout X (machine A), built in
    checkout Y on machine B with --base-dir."""
    _srv, url = http_store(t)
    checkouts(t, {"src/k.cu": FILE_HASH_K}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "--remote-cache", url, "src/k.cu", cwd="X")
    must_hit(t, "checkout X with an empty cache C and the store", "--base-dir", t.p("X"), "--remote-cache", url,
             "src/k.cu", cwd="X", env=dict(t.env, GPUJIT_CACHE_DIR=t.p("cacheC")))
    t.check("checkout Y, machine B", "--base-dir", t.p("Y"), "--remote-cache", url, "src/k.cu", cwd="Y",
            env=dict(t.env, GPUJIT_CACHE_DIR=t.p("cacheB")), differs="checkout X")


# ================================================================ Python (--python)

@stale(python=True)
def py_build_path_header_edited_same_process(t):
    """gpujit.build(path) twice in one process, h.h rewritten between (same size, same second)."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1))
    t.compare_py(t.python('both("before", "k.cu")\nwrite("h.h", "#define V 2\\n")\nboth("edited", "k.cu")\n'),
                 {"edited": "before"})


@stale(python=True)
def py_source_base_is_cwd(t):
    """gpujit.build(source=...) including "h.h": its base is the working directory: d1, then d2 in
    the same process, then d1 again with its h.h edited in place (size and mtime kept)."""
    t.write("d1/h.h", V(1), mtime=OLD)
    t.write("d2/h.h", V(2), mtime=OLD)
    code = ("SRC = %r\nos.chdir('d1')\nboth('d1', source=SRC)\nos.chdir('../d2')\nboth('d2', source=SRC)\n"
            "os.chdir('../d1')\nedit_keep_stat('h.h', '#define V 3\\n')\nboth('d1 edited', source=SRC)\n") % inc("h.h")
    t.compare_py(t.python(code), {"d2": "d1", "d1 edited": "d1"})


@stale(python=True)
def py_same_process_header_in_earlier_I_dir(t):
    """One Python process builds k1.cu, k2.cu, k3.cu (one text, include_dirs a, b; the process makes
    a PCH of the block at the second and uses it at the third); a/h.h is created before k3.cu."""
    t.write("b/h.h", V(1))
    t.mkdir("a")
    for i in (1, 2, 3):
        t.write("k%d.cu" % i, inc("h.h"))
    code = ("both('k1', 'k1.cu', include_dirs=['a', 'b'])\nboth('k2', 'k2.cu', include_dirs=['a', 'b'])\n"
            "write('a/h.h', '#define V 5\\n')\nboth('a/h.h created', 'k3.cu', include_dirs=['a', 'b'])\n")
    t.compare_py(t.python(code), {"a/h.h created": "k2"})


@stale(python=True)
def py_same_process_pch_header_edited(t):
    """One Python process builds k1.cu, k2.cu (the PCH of `#include "h.h"` made), then h.h is
    rewritten (same size, same second) and k3.cu, k4.cu are built."""
    t.write("h.h", V(1))
    for i in (1, 2, 3, 4):
        t.write("k%d.cu" % i, inc("h.h"))
    code = ("both('k1', 'k1.cu')\nboth('k2', 'k2.cu')\nwrite('h.h', '#define V 2\\n')\n"
            "both('k3', 'k3.cu')\nboth('k4', 'k4.cu')\n")
    t.compare_py(t.python(code), {"k3": "k2", "k4": "k2"})


@stale(python=True)
def py_same_process_pch_source_text_chdir(t):
    """One process builds three source= texts of one block `#include "h.h"` (the PCH made at the
    second): the first two from d1, the third from d2, whose h.h differs."""
    t.write("d1/h.h", V(1), mtime=OLD)
    t.write("d2/h.h", V(2), mtime=OLD)
    code = ("H = '#include \"h.h\"\\n'\nos.chdir('d1')\n"
            "both('s1', source=H + %r)\nboth('s2', source=H + %r)\nos.chdir('../d2')\nboth('s3 in d2', source=H + %r)\n"
            % (body(1), body(2), body(2)))
    t.compare_py(t.python(code), {"s3 in d2": "s2"})


@stale(python=True)
def py_same_process_pch_raw_relative_I_chdir(t):
    """One process builds k1.cu, k2.cu (one block <h.h>; the PCH made at the second) with
    options=["-Iinc"] from d1, then k3.cu the same way from d2, whose inc/h.h differs."""
    for i in (1, 2, 3):
        t.write("k%d.cu" % i, inc("h.h", angle=True))
    t.write("d1/inc/h.h", V(1), mtime=OLD)
    t.write("d2/inc/h.h", V(2), mtime=OLD)
    code = ("P = [os.path.abspath('k%d.cu' % i) for i in (1, 2, 3)]\nos.chdir('d1')\n"
            "both('k1', P[0], options=['-Iinc'])\nboth('k2', P[1], options=['-Iinc'])\n"
            "os.chdir('../d2')\nboth('k3 in d2', P[2], options=['-Iinc'])\n")
    t.compare_py(t.python(code), {"k3 in d2": "k2"})


@stale(python=True)
def py_same_process_has_include_turns_true(t):
    """One process builds source text with __has_include("opt.h") twice; opt.h appears between."""
    code = ("SRC = %r\nboth('before', source=SRC)\nwrite('opt.h', '#define V 2\\n')\n"
            "both('opt.h created', source=SRC)\n" % HAS_OPT)
    t.compare_py(t.python(code), {"opt.h created": "before"})


@stale(python=True)
def py_source_vendor_two_cwds(t):
    """source= text with #include "../vendor/h.h" built from c1/w, then c2/w (two checkouts)."""
    t.write("c1/vendor/h.h", V(1), mtime=OLD)
    t.write("c2/vendor/h.h", V(2), mtime=OLD)
    os.makedirs(t.p("c1/w"))
    os.makedirs(t.p("c2/w"))
    code = ("SRC = %r\nos.chdir('c1/w')\nboth('c1', source=SRC)\nos.chdir('../../c2/w')\nboth('c2', source=SRC)\n"
            % inc("../vendor/h.h"))
    t.compare_py(t.python(code), {"c2": "c1"})


@stale(python=True)
def py_relative_include_dirs_chdir(t):
    """gpujit.build(absolute path, include_dirs=['inc']) from d1, then from d2 in the same process."""
    t.write("k.cu", inc("h.h"))
    t.write("d1/inc/h.h", V(1), mtime=OLD)
    t.write("d2/inc/h.h", V(2), mtime=OLD)
    code = ("K = os.path.abspath('k.cu')\nos.chdir('d1')\nboth('d1', K, include_dirs=['inc'])\n"
            "os.chdir('../d2')\nboth('d2', K, include_dirs=['inc'])\n")
    t.compare_py(t.python(code), {"d2": "d1"})


@stale(python=True)
def py_source_separate_processes_cwd(t):
    """source= text including "h.h", built by one process in d1 and by another in d2."""
    t.write("d1/h.h", V(1), mtime=OLD)
    t.write("d2/h.h", V(2), mtime=OLD)
    code = "both(os.path.basename(os.getcwd()), source=%r)\n" % inc("h.h")
    t.compare_py(t.python(code, cwd="d1"))
    t.compare_py(t.python(code, cwd="d2"), {"d2": "d1"})


@stale(python=True)
def py_source_named_in_subdir(t):
    """source= text named "sub/k.cu" including "h.h" (NVRTC looks beside the name, sub/, from the
    working directory): sub/h.h is edited, then the build runs from d2 with a sub/h.h of its own."""
    for d, v in (("d1", 1), ("d2", 3)):
        t.write(d + "/sub/h.h", V(v), mtime=OLD)
        t.write(d + "/h.h", V(9), mtime=OLD)
    code = ("SRC = %r\nos.chdir('d1')\nboth('d1', source=SRC, name='sub/k.cu')\n"
            "edit_keep_stat('sub/h.h', '#define V 2\\n')\nboth('d1 edited', source=SRC, name='sub/k.cu')\n"
            "os.chdir('../d2')\nboth('d2', source=SRC, name='sub/k.cu')\n") % inc("h.h")
    t.compare_py(t.python(code), {"d1 edited": "d1", "d2": "d1 edited"})


@stale(python=True)
def py_raw_option_relative_I_chdir(t):
    """gpujit.build(path, options=["-Iinc"]) (NVRTC's own, relative to the working directory) from
    d1, then d2, in one process."""
    t.write("k.cu", inc("h.h", angle=True))
    t.write("d1/inc/h.h", V(1), mtime=OLD)
    t.write("d2/inc/h.h", V(2), mtime=OLD)
    code = ("K = os.path.abspath('k.cu')\nos.chdir('d1')\nboth('d1', K, options=['-Iinc'])\n"
            "os.chdir('../d2')\nboth('d2', K, options=['-Iinc'])\n")
    t.compare_py(t.python(code), {"d2": "d1"})


@stale(python=True)
def py_source_file_hash_two_cwds(t):
    """source= text hashing __FILE__ into constants, built from d1 and then d2 (its name is
    resolved in the working directory, or is not: the cache must agree with NVRTC)."""
    t.mkdir("d1", "d2")
    code = "SRC = %r\nos.chdir('d1')\nboth('d1', source=SRC)\nos.chdir('../d2')\nboth('d2', source=SRC)\n" % FILE_HASH_K
    t.compare_py(t.python(code))


@stale(python=True)
def py_source_through_server_cwd(t):
    """A build server runs (started by the CLI); Python builds source= text including "h.h" from d1,
    then d2: the server's worker must read the client's working directory's h.h."""
    env = t.server()
    t.write("d1/h.h", V(1), mtime=OLD)
    t.write("d2/h.h", V(2), mtime=OLD)
    code = "both(os.path.basename(os.getcwd()), source=%r)\n" % inc("h.h")
    t.compare_py(t.python(code, cwd="d1", env=env))
    t.compare_py(t.python(code, cwd="d2", env=env), {"d2": "d1"})
    st = t.server_status()
    if not st.get("built"):
        raise Skip("the build server built none of Python's misses (requests %s, refused %s): the class "
                   "checked in-process builds only" % (st.get("requests"), st.get("refused")))


# ---------------------------------------------------------------- the runner

class Suite:
    def __init__(self, gpujit, python=None, keep=False, root=None):
        self.gpujit, self.python, self.keep = gpujit, python, keep
        self.aged = False  # --aged: each cached build waits until every stamp can be trusted
        self.root = tempfile.mkdtemp(prefix="gpujit-stale-", dir=root)
        # gpujit's settings of the cache, the server and the target are the classes' own; those
        # that say where the toolchain is (a pip toolkit's NVRTC, the worker) are kept
        keep = ("GPUJIT_NVRTC_LIBRARY", "GPUJIT_NVJITLINK_LIBRARY", "GPUJIT_LIBCUDA", "GPUJIT_WORKER")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUJIT_") or k in keep}
        env.update(NO_COLOR="1", GPUJIT_SERVER="0")
        self.env = env
        self._tk = None
        self._tk_lock = threading.Lock()

    def toolkit_root(self):
        for v in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
            if v and os.path.isdir(os.path.join(v, "include")):
                return os.path.realpath(v)
        raise Skip("no CUDA toolkit at $CUDA_PATH, $CUDA_HOME or /usr/local/cuda")

    def toolkit_template(self):
        """Once per run: the toolkit with include/ copied, bin/ a directory of links, the rest links."""
        with self._tk_lock:
            if self._tk:
                return self._tk
            real = self.toolkit_root()
            if not os.path.exists(os.path.join(real, "bin", "ptxas")):
                raise Skip("the toolkit at %s has no bin/ptxas" % real)
            tk = os.path.join(self.root, "toolkit-copy")
            os.makedirs(os.path.join(tk, "bin"))
            for n in os.listdir(real):
                if n not in ("include", "bin"):
                    os.symlink(os.path.join(real, n), os.path.join(tk, n))
            for n in os.listdir(os.path.join(real, "bin")):
                os.symlink(os.path.join(real, "bin", n), os.path.join(tk, "bin", n))
            shutil.copytree(os.path.join(real, "include"), os.path.join(tk, "include"), symlinks=True)
            self._tk = tk
            return tk

    def run_one(self, fn):
        """(result, why): 'PASS', 'FAIL' or 'SKIP'."""
        if fn.python and not self.python:
            return "SKIP", "no --python interpreter given"
        t = Case(self, fn.__name__)
        try:
            fn(t)
            return "PASS", ""
        except Fail as e:
            return "FAIL", str(e)
        except Skip as e:
            return "SKIP", str(e)
        except Exception as e:  # a class that breaks is a failure, said in one line
            return "FAIL", "%s: %s" % (type(e).__name__, e)
        finally:
            for c in reversed(t.cleanups):
                try:
                    c()
                except Exception:
                    pass
            if self.keep:
                print("kept %s" % t.dir, file=sys.stderr)
            else:
                shutil.rmtree(t.dir, ignore_errors=True)

    def close(self):
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


def select_classes(patterns):
    return [c for c in CLASSES if not patterns or any(p in c.__name__ for p in patterns)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gpujit", nargs="?")
    ap.add_argument("--python")
    ap.add_argument("-k", action="append", default=[], metavar="NAME")
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--times", action="store_true")
    ap.add_argument("--aged", action="store_true",
                    help="wait a second before each cached build, so that every stat and directory stamp the "
                         "cache recorded is old enough to be trusted (its fast paths, not only its slow ones)")
    ap.add_argument("--list", action="store_true", help="print the classes' names and what each changes")
    a = ap.parse_args(argv)
    classes = select_classes(a.k)
    if a.list:
        for c in classes:
            print("%s%s: %s" % (c.__name__, " (python)" if c.python else "", " ".join(c.__doc__.split())))
        return 0
    if not a.gpujit:
        ap.error("the gpujit binary is required")
    suite = Suite(os.path.abspath(a.gpujit), a.python, a.keep)
    suite.aged = a.aged
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    start = time.monotonic()

    def one(fn):
        t0 = time.monotonic()
        return fn, suite.run_one(fn), time.monotonic() - t0

    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, a.j)) as ex:
            for fn, (res, why), secs in ex.map(one, classes):
                counts[res] += 1
                why = " ".join(why.split())
                print("%s %s%s" % (res, fn.__name__, ": " + why if why else ""), flush=True)
                if a.times:
                    print("  %.2f s" % secs, file=sys.stderr, flush=True)
    finally:
        suite.close()
    if a.times:
        print("total %.1f s" % (time.monotonic() - start), file=sys.stderr)
    print("%d passed, %d failed, %d skipped" % (counts["PASS"], counts["FAIL"], counts["SKIP"]))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
