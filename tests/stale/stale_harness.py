"""What every class of the staleness test (run.py) uses: a class's case, its builds, the checks
that compare a cached build with a build of the files as they are now, and the sources and
helpers several families of classes share. Standard library only."""
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


# ================================================================ shared by several families

PASTE_CAT = "#define CAT(a, b) a##b\n#define XCAT(a, b) CAT(a, b)\n"


HAS_OPT = '#if __has_include("opt.h")\n#include "opt.h"\n#else\n#define V 1\n#endif\n' + K


ONCE_H = "#pragma once\n#ifdef ONCE_SEEN\n#define TWICE 1\n#endif\n"


GUARD_H = "#ifndef GUARD_H\n#define GUARD_H\n#ifdef ONCE_SEEN\n#define TWICE 1\n#endif\n#endif\n"


def must_hit_check(t, label, *args, **kw):
    """t.check, and the cached build must be a hit: what changed cannot change the output."""
    b = t.check(label, *args, **kw)
    if b.status != "hit":
        raise Fail("%s: no hit (%s%s), though nothing NVRTC sees changed" % (label, b.status, b.reason()))


def prelude_manifest(t, extra=None):
    opts = {"prelude": '#include "pre.h"\n'}
    opts.update(extra or {})
    t.write("p/k.cu", K)
    t.write("p/m.json", json.dumps({"modules": [{"name": "k", "files": ["k.cu"], "options": opts}]}))


def checkouts(t, files, edits):
    """X/ holds files (old mtimes); Y/ is a copy of X (mtimes kept) with `edits` made in place,
    each of the same size (mtime kept)."""
    for rel, text in files.items():
        t.write("X/" + rel, text, mtime=OLD)
    shutil.copytree(t.p("X"), t.p("Y"), symlinks=True)
    for rel, text in edits.items():
        t.edit_keep_stat("Y/" + rel, text)


FILE_HASH_K = (FNV + "__device__ unsigned file_hash = fnv(__FILE__);\n"
               'extern "C" __global__ void k(unsigned *o) { o[0] = fnv(__FILE__); o[1] = file_hash; }\n')


def file_hash_checkouts(t, expr):
    k = (FNV + PASTE_CAT + "__device__ unsigned file_hash = fnv(%s);\n"
         'extern "C" __global__ void k(unsigned *o) { o[0] = fnv(%s); o[1] = file_hash; }\n') % (expr, expr)
    checkouts(t, {"src/k.cu": k}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


def body(m, extra=""):
    return 'extern "C" __global__ void k(int *o) { o[0] = V * %d; %s}\n' % (m, extra)


def module_pch(b):
    mods = b.doc.get("modules") or [{}]
    return mods[0].get("pch", "?")


def project(t, n=3, head='#include "common.h"\n'):
    for i in range(n):
        t.write("p/k%d.cu" % i, head + 'extern "C" __global__ void k%d(int *o) { o[0] = V + %d; }\n' % (i, i))


def manifest(t, mods):
    t.write("p/m.json", json.dumps({"modules": mods}))


def must_hit(t, what, *args, cwd=None, env=None):
    """The cache moved (imported, or a remote store) must serve an unchanged build: else the class
    would pass without testing the move."""
    b = t.build(*args, cwd=cwd, env=env)
    if b.status != "hit":
        raise Fail("test does not test: %s was no hit (%s%s)" % (what, b.status, b.reason()))
