"""Staleness classes (run.py): links."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


ONCE_SRC = ('#include "a.h"\n#define ONCE_SEEN 1\n#include "b.h"\n#ifdef TWICE\n#define V 2\n#else\n#define V 1\n#endif\n'
            + K)


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
