"""Staleness classes (run.py): several sources (LTO)."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


LTO_X = '#include "common.h"\n__device__ int fx() { return CV; }\n'
LTO_Y = '#include "common.h"\n__device__ int fx();\nextern "C" __global__ void k(int *o) { o[0] = fx(); o[1] = CV; }\n'


@stale
def lto_common_h_per_source_dir(t):
    """a/x.cu and b/y.cu, LTO-linked, each include "common.h" from its own directory: b/common.h
    is edited, then a/common.h."""
    t.write("a/x.cu", LTO_X)
    t.write("b/y.cu", LTO_Y)
    t.write("a/common.h", V(1, "CV"), mtime=OLD)
    t.write("b/common.h", V(2, "CV"), mtime=OLD)
    t.check("before", "a/x.cu", "b/y.cu")
    t.edit_keep_stat("b/common.h", V(3, "CV"))
    t.check("b/common.h edited", "a/x.cu", "b/y.cu", differs="before")
    t.edit_keep_stat("a/common.h", V(4, "CV"))
    t.check("a/common.h edited", "a/x.cu", "b/y.cu", differs="b/common.h edited")


@stale
def lto_common_h_created_in_source_dir(t):
    """a/x.cu and b/y.cu include "common.h" found in -I inc; b/common.h is created (for y.cu only)."""
    t.write("a/x.cu", LTO_X)
    t.write("b/y.cu", LTO_Y)
    t.write("inc/common.h", V(1, "CV"))
    t.check("before", "a/x.cu", "b/y.cu", "-I", "inc")
    t.write("b/common.h", V(2, "CV"))
    t.check("b/common.h created", "a/x.cu", "b/y.cu", "-I", "inc", differs="before")


@stale
def lto_same_basename_sources(t):
    """a/k.cu and b/k.cu (one name, two directories), each with its own h.h: b/h.h is edited."""
    t.write("a/k.cu", '#include "h.h"\n__device__ int fx() { return CV; }\n')
    t.write("b/k.cu", '#include "h.h"\n' + LTO_Y.split("\n", 1)[1])
    t.write("a/h.h", V(1, "CV"), mtime=OLD)
    t.write("b/h.h", V(2, "CV"), mtime=OLD)
    t.check("before", "a/k.cu", "b/k.cu")
    t.edit_keep_stat("b/h.h", V(3, "CV"))
    t.check("b/h.h edited", "a/k.cu", "b/k.cu", differs="before")
