"""Staleness classes (run.py): changes during the compile."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


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
