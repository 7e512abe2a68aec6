"""Staleness classes (run.py): the working directory, preludes."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


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
