"""Staleness classes (run.py): project builds."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


@stale
def project_manifest_j2_header_edited(t):
    """--modules m.json, -j 2: three modules include p/inc/common.h (an include_dirs entry), which
    is edited in place (same size, mtime kept)."""
    project(t)
    t.write("p/inc/common.h", V(1), mtime=OLD)
    t.write("p/m.json", json.dumps({"modules": [{"name": "k%d" % i, "files": ["k%d.cu" % i],
                                                 "options": {"include_dirs": [t.p("p/inc")]}} for i in range(3)]}))
    t.check("before", "-j", "2", "--modules", "p/m.json", project=True)
    t.edit_keep_stat("p/inc/common.h", V(2))
    t.check("common.h edited", "-j", "2", "--modules", "p/m.json", project=True, differs="before")


@stale
def project_dir_j2_header_in_earlier_I_dir(t):
    """gpujit build -j 2 -I a -I b p/: the modules' "common.h" was b's; a/common.h is created."""
    project(t)
    t.write("b/common.h", V(1))
    t.mkdir("a")
    args = ("-j", "2", "-I", "a", "-I", "b", "p")
    t.check("before", *args, project=True)
    t.write("a/common.h", V(2))
    t.check("a/common.h created", *args, project=True, differs="before")


@stale
def project_manifest_from_another_cwd(t):
    """A manifest's relative include_dirs ["inc"], with an inc/common.h beside the manifest and in
    the working directories d1 and d2: built from d1, from d2, then the manifest's one edited (the
    cache must follow whichever NVRTC is given)."""
    project(t)
    for d, v in (("p", 1), ("d1", 2), ("d2", 3)):
        t.write(d + "/inc/common.h", V(v), mtime=OLD)
    t.write("p/m.json", json.dumps({"modules": [{"name": "k%d" % i, "files": ["k%d.cu" % i],
                                                 "options": {"include_dirs": ["inc"]}} for i in range(3)]}))
    t.check("from d1", "-j", "2", "--modules", "../p/m.json", cwd="d1", project=True)
    t.check("from d2", "-j", "2", "--modules", "../p/m.json", cwd="d2", project=True)
    t.edit_keep_stat("p/inc/common.h", V(4))
    t.check("p/inc/common.h edited", "-j", "2", "--modules", "../p/m.json", cwd="d2", project=True)
    if same_code(t.seen["from d1"], t.seen["p/inc/common.h edited"]):
        raise Fail("test does not test: no step changed the code")


@stale
def project_base_dir_checkouts(t):
    """gpujit build -j 2 --base-dir in two checkouts of a project: modules including
    "../vendor/h.h" (Y's differs) and one hashing __FILE__."""
    checkouts(t, {"p/k0.cu": inc("../vendor/h.h"), "p/k1.cu": inc("../vendor/h.h"), "vendor/h.h": V(1),
                  "p/f.cu": FILE_HASH_K}, {"vendor/h.h": V(2)})
    t.check("checkout X", "-j", "2", "--base-dir", t.p("X"), "p", cwd="X", project=True)
    t.check("checkout Y", "-j", "2", "--base-dir", t.p("Y"), "p", cwd="Y", project=True, differs="checkout X")


@stale
def project_pch_header_edited(t):
    """A project build with --pch -j 1 (one worker makes and uses the PCH of the modules' block):
    common.h is edited in place (same size, mtime kept) and the build run again."""
    project(t)
    t.write("p/common.h", V(1), mtime=OLD)
    t.check("before", "-j", "1", "--pch", "p", project=True)
    t.edit_keep_stat("p/common.h", V(2))
    t.check("common.h edited", "-j", "1", "--pch", "p", project=True, differs="before")


@stale
def project_pch_modules_with_other_include_dirs(t):
    """One worker (--pch -j 1), modules of one include block `#include "h.h"` in one directory whose
    manifest include_dirs differ (i1, i2, i1): each must read its own h.h, PCH or not."""
    for i in range(3):
        t.write("p/k%d.cu" % i, inc("h.h"))
    t.write("i1/h.h", V(1))
    t.write("i2/h.h", V(2))
    manifest(t, [{"name": "k%d" % i, "files": ["k%d.cu" % i], "options": {"include_dirs": [t.p(d)]}}
                 for i, d in enumerate(("i1", "i2", "i1"))])
    t.check("built", "-j", "1", "--pch", "--modules", "p/m.json", project=True)
    t.write("i2/h.h", V(3))
    t.check("i2/h.h edited", "-j", "1", "--pch", "--modules", "p/m.json", project=True, differs="built")


@stale
def project_pch_modules_with_other_defines(t):
    """One worker (--pch -j 1), modules of one include block `#include "h.h"` where h.h reads a
    macro the manifest defines per module (FAST=1, FAST=0, FAST=1)."""
    for i in range(3):
        t.write("p/k%d.cu" % i, inc("h.h"))
    t.write("p/h.h", "#if FAST\n#define V 1\n#else\n#define V 2\n#endif\n")
    manifest(t, [{"name": "k%d" % i, "files": ["k%d.cu" % i], "options": {"defines": ["FAST=%d" % f]}}
                 for i, f in enumerate((1, 0, 1))])
    t.check("built", "-j", "1", "--pch", "--modules", "p/m.json", project=True)
    t.write("p/h.h", "#if FAST\n#define V 3\n#else\n#define V 2\n#endif\n")
    t.check("h.h edited", "-j", "1", "--pch", "--modules", "p/m.json", project=True, differs="built")


@stale
def project_pch_same_block_other_dirs(t):
    """One worker (--pch -j 1), p/a/k*.cu and p/b/k*.cu with one block `#include "common.h"` that
    resolves per directory; then b/common.h is edited (size and mtime kept)."""
    for d, v in (("a", 1), ("b", 2)):
        for i in range(2):
            t.write("p/%s/k%d.cu" % (d, i), inc("common.h"))
        t.write("p/%s/common.h" % d, V(v), mtime=OLD)
    t.check("built", "-j", "1", "--pch", "p", project=True)
    t.edit_keep_stat("p/b/common.h", V(3))
    t.check("b/common.h edited", "-j", "1", "--pch", "p", project=True, differs="built")
