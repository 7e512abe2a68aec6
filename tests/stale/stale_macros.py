"""Staleness classes (run.py): computed includes and macros."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


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
