"""Staleness classes (run.py): Python (--python)."""
from stale_harness import *  # noqa: F401,F403 (the classes' shared vocabulary)


@stale(python=True)
def py_build_path_header_edited_same_process(t):
    """gpujit.build(path) twice in one process, h.h rewritten between (same size, same second)."""
    t.write("k.cu", inc("h.h"))
    t.write("h.h", V(1))
    t.compare_py(t.python('both("before", "k.cu")\nwrite("h.h", "#define V 2\\n")\nboth("edited", "k.cu")\n'),
                 {"edited": "before"})


@stale(python=True)
def py_source_base_is_cwd(t):
    """gpujit.build(source=...) including "h.h": its base is the working directory: d1, then d2 in
    the same process, then d1 again with its h.h edited in place (size and mtime kept)."""
    t.write("d1/h.h", V(1), mtime=OLD)
    t.write("d2/h.h", V(2), mtime=OLD)
    code = ("SRC = %r\nos.chdir('d1')\nboth('d1', source=SRC)\nos.chdir('../d2')\nboth('d2', source=SRC)\n"
            "os.chdir('../d1')\nedit_keep_stat('h.h', '#define V 3\\n')\nboth('d1 edited', source=SRC)\n") % inc("h.h")
    t.compare_py(t.python(code), {"d2": "d1", "d1 edited": "d1"})


@stale(python=True)
def py_same_process_header_in_earlier_I_dir(t):
    """One Python process builds k1.cu, k2.cu, k3.cu (one text, include_dirs a, b; the process makes
    a PCH of the block at the second and uses it at the third); a/h.h is created before k3.cu."""
    t.write("b/h.h", V(1))
    t.mkdir("a")
    for i in (1, 2, 3):
        t.write("k%d.cu" % i, inc("h.h"))
    code = ("both('k1', 'k1.cu', include_dirs=['a', 'b'])\nboth('k2', 'k2.cu', include_dirs=['a', 'b'])\n"
            "write('a/h.h', '#define V 5\\n')\nboth('a/h.h created', 'k3.cu', include_dirs=['a', 'b'])\n")
    t.compare_py(t.python(code), {"a/h.h created": "k2"})


@stale(python=True)
def py_same_process_pch_header_edited(t):
    """One Python process builds k1.cu, k2.cu (the PCH of `#include "h.h"` made), then h.h is
    rewritten (same size, same second) and k3.cu, k4.cu are built."""
    t.write("h.h", V(1))
    for i in (1, 2, 3, 4):
        t.write("k%d.cu" % i, inc("h.h"))
    code = ("both('k1', 'k1.cu')\nboth('k2', 'k2.cu')\nwrite('h.h', '#define V 2\\n')\n"
            "both('k3', 'k3.cu')\nboth('k4', 'k4.cu')\n")
    t.compare_py(t.python(code), {"k3": "k2", "k4": "k2"})


@stale(python=True)
def py_same_process_pch_source_text_chdir(t):
    """One process builds three source= texts of one block `#include "h.h"` (the PCH made at the
    second): the first two from d1, the third from d2, whose h.h differs."""
    t.write("d1/h.h", V(1), mtime=OLD)
    t.write("d2/h.h", V(2), mtime=OLD)
    code = ("H = '#include \"h.h\"\\n'\nos.chdir('d1')\n"
            "both('s1', source=H + %r)\nboth('s2', source=H + %r)\nos.chdir('../d2')\nboth('s3 in d2', source=H + %r)\n"
            % (body(1), body(2), body(2)))
    t.compare_py(t.python(code), {"s3 in d2": "s2"})


@stale(python=True)
def py_same_process_pch_raw_relative_I_chdir(t):
    """One process builds k1.cu, k2.cu (one block <h.h>; the PCH made at the second) with
    options=["-Iinc"] from d1, then k3.cu the same way from d2, whose inc/h.h differs."""
    for i in (1, 2, 3):
        t.write("k%d.cu" % i, inc("h.h", angle=True))
    t.write("d1/inc/h.h", V(1), mtime=OLD)
    t.write("d2/inc/h.h", V(2), mtime=OLD)
    code = ("P = [os.path.abspath('k%d.cu' % i) for i in (1, 2, 3)]\nos.chdir('d1')\n"
            "both('k1', P[0], options=['-Iinc'])\nboth('k2', P[1], options=['-Iinc'])\n"
            "os.chdir('../d2')\nboth('k3 in d2', P[2], options=['-Iinc'])\n")
    t.compare_py(t.python(code), {"k3 in d2": "k2"})


@stale(python=True)
def py_same_process_has_include_turns_true(t):
    """One process builds source text with __has_include("opt.h") twice; opt.h appears between."""
    code = ("SRC = %r\nboth('before', source=SRC)\nwrite('opt.h', '#define V 2\\n')\n"
            "both('opt.h created', source=SRC)\n" % HAS_OPT)
    t.compare_py(t.python(code), {"opt.h created": "before"})


@stale(python=True)
def py_source_vendor_two_cwds(t):
    """source= text with #include "../vendor/h.h" built from c1/w, then c2/w (two checkouts)."""
    t.write("c1/vendor/h.h", V(1), mtime=OLD)
    t.write("c2/vendor/h.h", V(2), mtime=OLD)
    os.makedirs(t.p("c1/w"))
    os.makedirs(t.p("c2/w"))
    code = ("SRC = %r\nos.chdir('c1/w')\nboth('c1', source=SRC)\nos.chdir('../../c2/w')\nboth('c2', source=SRC)\n"
            % inc("../vendor/h.h"))
    t.compare_py(t.python(code), {"c2": "c1"})


@stale(python=True)
def py_relative_include_dirs_chdir(t):
    """gpujit.build(absolute path, include_dirs=['inc']) from d1, then from d2 in the same process."""
    t.write("k.cu", inc("h.h"))
    t.write("d1/inc/h.h", V(1), mtime=OLD)
    t.write("d2/inc/h.h", V(2), mtime=OLD)
    code = ("K = os.path.abspath('k.cu')\nos.chdir('d1')\nboth('d1', K, include_dirs=['inc'])\n"
            "os.chdir('../d2')\nboth('d2', K, include_dirs=['inc'])\n")
    t.compare_py(t.python(code), {"d2": "d1"})


@stale(python=True)
def py_source_separate_processes_cwd(t):
    """source= text including "h.h", built by one process in d1 and by another in d2."""
    t.write("d1/h.h", V(1), mtime=OLD)
    t.write("d2/h.h", V(2), mtime=OLD)
    code = "both(os.path.basename(os.getcwd()), source=%r)\n" % inc("h.h")
    t.compare_py(t.python(code, cwd="d1"))
    t.compare_py(t.python(code, cwd="d2"), {"d2": "d1"})


@stale(python=True)
def py_source_named_in_subdir(t):
    """source= text named "sub/k.cu" including "h.h" (NVRTC looks beside the name, sub/, from the
    working directory): sub/h.h is edited, then the build runs from d2 with a sub/h.h of its own."""
    for d, v in (("d1", 1), ("d2", 3)):
        t.write(d + "/sub/h.h", V(v), mtime=OLD)
        t.write(d + "/h.h", V(9), mtime=OLD)
    code = ("SRC = %r\nos.chdir('d1')\nboth('d1', source=SRC, name='sub/k.cu')\n"
            "edit_keep_stat('sub/h.h', '#define V 2\\n')\nboth('d1 edited', source=SRC, name='sub/k.cu')\n"
            "os.chdir('../d2')\nboth('d2', source=SRC, name='sub/k.cu')\n") % inc("h.h")
    t.compare_py(t.python(code), {"d1 edited": "d1", "d2": "d1 edited"})


@stale(python=True)
def py_raw_option_relative_I_chdir(t):
    """gpujit.build(path, options=["-Iinc"]) (NVRTC's own, relative to the working directory) from
    d1, then d2, in one process."""
    t.write("k.cu", inc("h.h", angle=True))
    t.write("d1/inc/h.h", V(1), mtime=OLD)
    t.write("d2/inc/h.h", V(2), mtime=OLD)
    code = ("K = os.path.abspath('k.cu')\nos.chdir('d1')\nboth('d1', K, options=['-Iinc'])\n"
            "os.chdir('../d2')\nboth('d2', K, options=['-Iinc'])\n")
    t.compare_py(t.python(code), {"d2": "d1"})


@stale(python=True)
def py_source_file_hash_two_cwds(t):
    """source= text hashing __FILE__ into constants, built from d1 and then d2 (its name is
    resolved in the working directory, or is not: the cache must agree with NVRTC)."""
    t.mkdir("d1", "d2")
    code = "SRC = %r\nos.chdir('d1')\nboth('d1', source=SRC)\nos.chdir('../d2')\nboth('d2', source=SRC)\n" % FILE_HASH_K
    t.compare_py(t.python(code))


@stale(python=True)
def py_source_through_server_cwd(t):
    """A build server runs (started by the CLI); Python builds source= text including "h.h" from d1,
    then d2: the server's worker must read the client's working directory's h.h."""
    env = t.server()
    t.write("d1/h.h", V(1), mtime=OLD)
    t.write("d2/h.h", V(2), mtime=OLD)
    code = "both(os.path.basename(os.getcwd()), source=%r)\n" % inc("h.h")
    t.compare_py(t.python(code, cwd="d1", env=env))
    t.compare_py(t.python(code, cwd="d2", env=env), {"d2": "d1"})
    st = t.server_status()
    if not st.get("built"):
        raise Skip("the build server built none of Python's misses (requests %s, refused %s): the class "
                   "checked in-process builds only" % (st.get("requests"), st.get("refused")))


# ---------------------------------------------------------------- the runner


@stale(python=True)
def py_same_process_toolkit_header_edited(t):
    """One Python process builds k.cu, which includes a toolkit copy's <gj_tk.h> (a header of the
    shared group), five times: from its third lookup on the process watches the group itself
    (cache/records/group_watch.c) and vouches for it. Then gj_tk.h is rewritten in place (same
    size and mtime), built twice; renamed over, built twice. k2.cu, built as often beside it, asks
    __has_include(<gj_tk2.h>), absent from the copy's include/ (an absence its group records), and
    is built again after gj_tk2.h is created there."""
    t.write("k.cu", inc("gj_tk.h", angle=True))
    t.write("k2.cu", '#if __has_include(<gj_tk2.h>)\n#include <gj_tk2.h>\n#else\n#define V 9\n#endif\n' + K)
    T = t.toolkit("tk")
    t.write("tk/include/gj_tk.h", V(1), mtime=OLD)
    h, h2 = os.path.join(T, "include", "gj_tk.h"), os.path.join(T, "include", "gj_tk2.h")
    code = ("for i in range(5):\n    both('v1 %%d' %% i, 'k.cu')\n    both('k2 absent %%d' %% i, 'k2.cu')\n"
            "edit_keep_stat(%r, '#define V 2\\n')\nboth('edited', 'k.cu')\nboth('edited again', 'k.cu')\n"
            "write(%r, '#define V 3\\n')\nos.replace(%r, %r)\nboth('renamed over', 'k.cu')\nboth('renamed again', 'k.cu')\n"
            "write(%r, '#define V 4\\n')\nboth('k2 created', 'k2.cu')\nboth('k2 again', 'k2.cu')\n"
            ) % (h, h + ".new", h + ".new", h, h2)
    t.compare_py(t.python(code, env=dict(t.env, CUDA_PATH=T)),
                 {"edited": "v1 4", "renamed over": "edited", "k2 created": "k2 absent 4"})
