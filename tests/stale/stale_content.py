"""Staleness classes (run.py): header content and its stat."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


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
