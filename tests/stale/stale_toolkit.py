"""Staleness classes (run.py): the toolkit."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


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
