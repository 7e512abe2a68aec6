"""Staleness classes (run.py): the search path."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


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
