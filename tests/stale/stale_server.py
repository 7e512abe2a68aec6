"""Staleness classes (run.py): the build server and PCHs."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


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
