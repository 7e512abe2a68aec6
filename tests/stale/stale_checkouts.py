"""Staleness classes (run.py): checkouts and --base-dir."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


@stale
def base_dir_vendor_header_across_checkouts(t):
    """#include "../vendor/h.h" in two checkouts built with --base-dir: Y's vendor/h.h differs."""
    checkouts(t, {"src/k.cu": inc("../vendor/h.h"), "vendor/h.h": V(1)}, {"vendor/h.h": V(2)})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_includer_dir_across_checkouts(t):
    """GPUJIT_BASE_DIR (the variable) in two checkouts whose k.cu includes its own "h.h": Y's differs."""
    checkouts(t, {"k.cu": inc("h.h"), "h.h": V(1)}, {"h.h": V(2)})
    t.check("checkout X", "k.cu", cwd="X", env=dict(t.env, GPUJIT_BASE_DIR=t.p("X")))
    t.check("checkout Y", "k.cu", cwd="Y", env=dict(t.env, GPUJIT_BASE_DIR=t.p("Y")), differs="checkout X")


@stale
def base_dir_I_dir_links_outside(t):
    """Two checkouts whose inc is a link to a directory outside them (v1, v2), with -I inc."""
    t.write("v1/h.h", V(1), mtime=OLD)
    t.write("v2/h.h", V(2), mtime=OLD)
    for c, v in (("X", "v1"), ("Y", "v2")):
        t.write(c + "/k.cu", inc("h.h"), mtime=OLD)
        t.symlink("../" + v, c + "/inc")
    t.check("checkout X", "--base-dir", t.p("X"), "k.cu", "-I", "inc", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "k.cu", "-I", "inc", cwd="Y", differs="checkout X")


@stale
def base_dir_file_hash_across_checkouts(t):
    """A __FILE__-hashed constant (in code and in a __device__ variable's initializer) in two
    checkouts built with --base-dir: the same text names another file."""
    checkouts(t, {"src/k.cu": FILE_HASH_K}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_file_hash_in_header(t):
    """vendor/h.h hashes its own __FILE__ into a constant: two checkouts with --base-dir."""
    checkouts(t, {"src/k.cu": inc("../vendor/h.h", 'extern "C" __global__ void k(unsigned *o) { o[0] = HF; }\n'),
                  "vendor/h.h": FNV + "#define HF fnv(__FILE__)\n"}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_device_assert_across_checkouts(t):
    """A device assert (cuda/std/cassert: its message holds __FILE__, expanded from a toolkit
    macro, not the user's text) in two checkouts built with --base-dir."""
    checkouts(t, {"src/k.cu": '#include <cuda/std/cassert>\n'
                  'extern "C" __global__ void k(int *o) { assert(o[0] != 5); o[1] = 2; }\n'}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_source_location(t):
    """cuda::std::source_location::current().file_name() hashed into the code: two checkouts."""
    checkouts(t, {"src/k.cu": "#include <cuda/std/source_location>\n" + FNV +
                  'extern "C" __global__ void k(unsigned *o)\n'
                  "{ constexpr auto l = cuda::std::source_location::current(); o[0] = fnv(l.file_name()); }\n"}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "src/k.cu", cwd="X")
    t.check("checkout Y", "--base-dir", t.p("Y"), "src/k.cu", cwd="Y", differs="checkout X")


@stale
def base_dir_file_via_D(t):
    """-D HERE=__FILE__ (the source never spells it), hashed into the code: two checkouts."""
    checkouts(t, {"src/k.cu": FNV + 'extern "C" __global__ void k(unsigned *o) { o[0] = fnv(HERE); }\n'}, {})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "-D", "HERE=__FILE__", "src/k.cu", cwd=c,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_file_via_raw_D(t):
    """-Xnvrtc -DHERE=__FILE__ (NVRTC's own option), hashed into the code: two checkouts."""
    checkouts(t, {"src/k.cu": FNV + 'extern "C" __global__ void k(unsigned *o) { o[0] = fnv(HERE); }\n'}, {})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "-Xnvrtc", "-DHERE=__FILE__", "src/k.cu", cwd=c,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_file_macro_in_prelude(t):
    """A manifest's prelude defines HF as fnv(__FILE__), which k.cu uses (so it names k.cu's path):
    two checkouts, each built with --base-dir."""
    m = {"modules": [{"name": "k", "files": ["k.cu"], "options": {"prelude": FNV + "#define HF fnv(__FILE__)\n"}}]}
    checkouts(t, {"p/k.cu": 'extern "C" __global__ void k(unsigned *o) { o[0] = HF; }\n',
                  "p/m.json": json.dumps(m)}, {})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "--modules", "p/m.json", cwd=c, project=True,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_pre_include_across_checkouts(t):
    """-Xnvrtc --pre-include=pre.h (relative to the working directory, the checkout) in two
    checkouts built with --base-dir: Y's pre.h differs."""
    checkouts(t, {"k.cu": K, "pre.h": V(1)}, {"pre.h": V(2)})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "-Xnvrtc", "--pre-include=pre.h", "k.cu", cwd=c,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_file_macro_in_outside_header(t):
    """A header outside both checkouts (absolute -I) defines HF as fnv(__FILE__), which k.cu uses:
    two checkouts with --base-dir."""
    t.write("shared/h.h", FNV + "#define HF fnv(__FILE__)\n", mtime=OLD)
    checkouts(t, {"k.cu": inc("h.h", 'extern "C" __global__ void k(unsigned *o) { o[0] = HF; }\n')}, {})
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "-I", t.p("shared"), "k.cu", cwd=c,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_file_macro_in_toolkit_header(t):
    """The toolkit copy's gj_tk.h defines GJ_HERE as fnv(__FILE__), which k.cu uses (naming k.cu):
    two checkouts with --base-dir, one toolkit."""
    t.toolkit("tk")
    t.write("tk/include/gj_tk.h", FNV + "#define GJ_HERE fnv(__FILE__)\n")
    k = inc("gj_tk.h", 'extern "C" __global__ void k(unsigned *o) { o[0] = GJ_HERE; }\n', angle=True)
    checkouts(t, {"k.cu": k}, {})
    env = dict(t.env, CUDA_PATH=t.p("tk"))
    for c in ("X", "Y"):
        t.check("checkout " + c, "--base-dir", t.p(c), "k.cu", cwd=c, env=env,
                differs="checkout X" if c == "Y" else None)


@stale
def base_dir_header_outside_base(t):
    """Two checkouts include one header outside both by an absolute -I: it is edited between."""
    t.write("shared/h.h", V(1), mtime=OLD)
    checkouts(t, {"k.cu": inc("h.h")}, {})
    t.check("checkout X", "--base-dir", t.p("X"), "k.cu", "-I", t.p("shared"), cwd="X")
    t.edit_keep_stat("shared/h.h", V(2))
    t.check("checkout Y", "--base-dir", t.p("Y"), "k.cu", "-I", t.p("shared"), cwd="Y", differs="checkout X")


@stale
def base_dir_header_above_base_dir(t):
    """Checkouts w1/ck and w2/ck (--base-dir each) include "../../shared/h.h": a header outside the
    base directory at the same place relative to it, w1/shared and w2/shared (same size and mtime)."""
    src = inc("../../shared/h.h")
    for w, v in (("w1", 1), ("w2", 2)):
        t.write(w + "/ck/src/k.cu", src, mtime=OLD)
        t.write(w + "/shared/h.h", V(v), mtime=OLD)
    t.check("w1/ck", "--base-dir", t.p("w1/ck"), "src/k.cu", cwd="w1/ck")
    t.check("w2/ck", "--base-dir", t.p("w2/ck"), "src/k.cu", cwd="w2/ck", differs="w1/ck")


@stale
def base_dir_file_by_token_paste(t):
    """__FILE__ made by token pasting (XCAT(__FI, LE__)), hashed into constants: two checkouts."""
    file_hash_checkouts(t, "XCAT(__FI, LE__)")


@stale
def base_dir_builtin_file(t):
    """__builtin_FILE() hashed into constants: two checkouts with --base-dir."""
    file_hash_checkouts(t, "__builtin_FILE()")


@stale
def base_dir_base_file(t):
    """__BASE_FILE__ hashed into constants: two checkouts with --base-dir."""
    file_hash_checkouts(t, "__BASE_FILE__")
