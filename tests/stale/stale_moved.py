"""Staleness classes (run.py): the cache moved: export, import, remote."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


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
