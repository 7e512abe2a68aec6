"""Arguments a user gets wrong, each refused with a TypeError or ValueError that names it (or
done as the docs say), and inputs that never end: nothing is taken for something else, nothing
is created where the user did not ask, nothing hangs."""
import os
import re
import time

import pytest

import gpujit

SRC = 'extern "C" __global__ void gj_args(int *o) { *o = V; }\n'


def value_of(m):
    """The constant the kernel stores, from its PTX."""
    return int(re.search(r"mov\.u32\s+%r\d+, (-?\d+);", m.image.decode()).group(1))


def build(**kw):
    kw.setdefault("arch", "compute_90")
    kw.setdefault("cache", False)
    return gpujit.build(source=SRC, name="gj_args.cu", **kw)


def test_defines_keys_are_macro_names():
    with pytest.raises(ValueError, match=r"defines: 'V=3' is not a macro name"):
        build(defines={"V=3": 2})
    with pytest.raises(ValueError, match="defines: 7 is not a macro name"):
        build(defines={7: 2})
    assert value_of(build(defines={"V": 5})) == 5
    assert value_of(build(defines=["V=6"])) == 6


def test_defines_values():
    assert value_of(build(defines={"V": True})) == 1  # not the text True
    assert value_of(build(defines={"V": False})) == 0
    with pytest.raises(TypeError, match=r"defines\['V'\] must be a str, int, float, bool or None, not list"):
        build(defines={"V": [1]})
    with pytest.raises(TypeError, match="defines must be a sequence of str, not a single str"):
        build(defines="V=1")


def test_include_dirs(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "v.h").write_text("#define V 9\n")
    src = '#include "v.h"\n' + SRC
    with pytest.raises(TypeError, match="include_dirs must be a sequence of paths, not a single str"):
        gpujit.build(source=src, include_dirs=str(tmp_path / "inc"), cache=False, arch="compute_90")
    with pytest.raises(TypeError, match="include_dirs must be a sequence of paths, not a single PosixPath"):
        gpujit.build(source=src, include_dirs=tmp_path / "inc", cache=False, arch="compute_90")
    assert value_of(gpujit.build(source=src, include_dirs=[tmp_path / "inc"], cache=False, arch="compute_90")) == 9
    with pytest.raises(gpujit.InvalidArgumentError, match="include directory '.*v.h' is a file, not a directory"):
        gpujit.build(source=src, include_dirs=[tmp_path / "inc" / "v.h"], cache=False, arch="compute_90")
    with pytest.raises(gpujit.InvalidArgumentError, match="include directory '.*nope' does not exist"):
        gpujit.build(source=src, include_dirs=[tmp_path / "nope"], cache=False, arch="compute_90")


def test_flags_are_bools():
    with pytest.raises(TypeError, match="lean must be True or False, not 'no'"):
        build(defines={"V": 1}, lean="no")
    with pytest.raises(TypeError, match="cache must be True, False or a cache directory, not int"):
        build(defines={"V": 1}, cache=1)


def test_relative_include_in_raw_options_follows_the_working_directory(tmp_path):
    """options=["-I."] names the working directory, as NVRTC reads it: from another directory
    with its own header the build must not be served the first directory's."""
    cache = tmp_path / "cache"
    for d, v in (("a", 1), ("b", 2)):
        (tmp_path / d).mkdir()
        (tmp_path / d / "v.h").write_text("#define V %d\n" % v)
    src = '#include "v.h"\n' + SRC
    old = os.getcwd()
    try:
        got = []
        for d in ("a", "b", "a"):
            os.chdir(tmp_path / d)
            got.append(value_of(gpujit.build(source=src, name="rel.cu", options=["-I."], cache=cache, arch="compute_90")))
    finally:
        os.chdir(old)
    assert got == [1, 2, 1]


def test_source_string_headers_are_dependencies(tmp_path):
    """A module built from a source string (source=) records the headers NVRTC read for it, as
    one built from a file does: the same build again hits; a header changed (of the same size and
    of another) misses and gives the new value; a header added earlier on the path misses."""
    cache = tmp_path / "cache"
    inc, first = tmp_path / "inc", tmp_path / "first"
    inc.mkdir()
    first.mkdir()
    (inc / "v.h").write_text("#define V 1\n")
    src = '#include "v.h"\n' + SRC

    def b():
        return gpujit.build(source=src, name="gj_source_deps.cu", include_dirs=[first, inc], cache=cache,
                            arch="compute_90")

    got = []
    for change in (None, None, "#define V 2\n", None, "#define V 333\n", "first", None):
        if change == "first":
            (first / "v.h").write_text("#define V 4\n")
        elif change:
            (inc / "v.h").write_text(change)
        time.sleep(0.05)  # a header written in the build's own clock tick is too new to record
        m = b()
        got.append((m.cache_hit, value_of(m)))
    assert got == [(False, 1), (True, 1), (False, 2), (True, 2), (False, 333), (False, 4), (True, 4)]


def test_numbers_are_named():
    with pytest.raises(TypeError, match="fail_above_pct must be a number, not str"):
        gpujit.trace.diff("a.json", "b.json", fail_above_pct="5")
    with pytest.raises(ValueError, match="fail_above_pct must be >= 0"):
        gpujit.trace.diff("a.json", "b.json", fail_above_pct=-1)
    with pytest.raises(TypeError, match="used_since must be a number, not str"):
        gpujit.cache.export("x.tar", used_since="yesterday")


def test_cache_admin_creates_nothing(tmp_path):
    missing = tmp_path / "missing" / "cache"
    s = gpujit.cache.stats(missing)  # an empty cache to look at, made nowhere
    assert (s["entries"], s["hits"], s["bytes"]) == (0, 0, 0)
    assert gpujit.cache.clear(missing) == 0
    assert not (tmp_path / "missing").exists()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    with pytest.raises(gpujit.InvalidArgumentError, match="holds files that are no gpujit cache's: left alone"):
        gpujit.cache.clear(foreign)
    with pytest.raises(gpujit.InvalidArgumentError):
        gpujit.cache.stats(foreign)
    assert sorted(os.listdir(foreign)) == ["notes.txt"]


def test_a_cache_that_cannot_be_made_is_said(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ValueError, match=r"cache=.*afile/dir.*cannot be made"):
        build(defines={"V": 1}, cache=afile / "dir")


def test_inputs_that_never_end(tmp_path):
    fifo = tmp_path / "k.cu"
    os.mkfifo(fifo)
    with pytest.raises(gpujit.GpujitIOError, match="is a FIFO; gpujit reads regular files only"):
        gpujit.build(fifo, cache=False, arch="compute_90")
    with pytest.raises(gpujit.GpujitIOError, match="is a character device"):
        gpujit.build("/dev/zero", cache=False, arch="compute_90")
    with pytest.raises(gpujit.GpujitIOError, match="is a character device"):
        gpujit.trace.analyze("/dev/zero")


def _records(tmp_path):
    import subprocess
    import sys
    make = os.path.join(os.path.dirname(__file__), "..", "profile", "make_records.py")
    subprocess.run([sys.executable, make, str(tmp_path / "rec")], check=True)
    return tmp_path / "rec"


def test_profile_arguments_of_the_wrong_type(tmp_path):
    """Each argument of gpujit.profile and gpujit.profile.load of the wrong type is a TypeError
    naming it (before: os.fspath's 'expected str, bytes or os.PathLike object, not int', naming
    nothing, or int('20') taken as 20)."""
    rec = _records(tmp_path)
    for call, name in [(lambda: gpujit.profile.load(5), "path"),
                       (lambda: gpujit.profile.load(None), "path"),
                       (lambda: gpujit.profile.load(rec, html=5), "html"),
                       (lambda: gpujit.profile.load(rec, json=5.0), "json"),
                       (lambda: gpujit.profile.load(rec, trace=[1]), "trace"),
                       (lambda: gpujit.profile.load(rec, save=b"x.gjprof"), "save"),
                       (lambda: gpujit.profile.load(rec, top="20"), "top"),
                       (lambda: gpujit.profile.load(rec, top=2.5), "top"),
                       (lambda: gpujit.profile(json=5), "json"),
                       (lambda: gpujit.profile(trace=object()), "trace"),
                       (lambda: gpujit.profile(title=3), "title"),
                       (lambda: gpujit.profile(top=True), "top"),
                       (lambda: gpujit.profile(print="no"), "print"),
                       (lambda: gpujit.profile(synchronize=None), "synchronize")]:
        with pytest.raises(TypeError, match=r"^%s must be" % name):
            call()
    with pytest.raises(ValueError, match="top must be >= 0, not -1"):
        gpujit.profile.load(rec, top=-1)
    assert gpujit.profile.load(rec, top=0).modules  # the right types still work


def test_profile_load_never_writes_over_its_input(tmp_path):
    """load(p, json=p) replaced the saved profile it read; two outputs naming one file kept only
    the last. Both are refused before anything is read or written."""
    rec = _records(tmp_path)
    saved = tmp_path / "in.gjprof"
    gpujit.profile.load(rec, save=saved)
    before = saved.read_bytes()
    with pytest.raises(gpujit.InvalidArgumentError, match="json=.*in.gjprof' is the profile being read"):
        gpujit.profile.load(saved, json=saved)
    with pytest.raises(gpujit.InvalidArgumentError, match="html=.*is the profile being read"):
        gpujit.profile.load(saved, html=str(tmp_path / "d" / ".." / "in.gjprof"))
    os.link(saved, tmp_path / "hard.gjprof")
    with pytest.raises(gpujit.InvalidArgumentError, match="save=.*hard.gjprof' is the profile being read"):
        gpujit.profile.load(saved, save=tmp_path / "hard.gjprof")
    with pytest.raises(gpujit.InvalidArgumentError, match="trace and html name one file"):
        gpujit.profile.load(saved, trace=tmp_path / "out.x", html=tmp_path / "out.x")
    assert saved.read_bytes() == before and not (tmp_path / "out.x").exists()
    with pytest.raises(gpujit.CorruptError, match="an empty directory: nothing to report"):
        (tmp_path / "empty").mkdir()
        gpujit.profile.load(tmp_path / "empty")


# Issue 60: what a Python user sees of the API's shape, and a wrong argument named wherever it is.

def test_benchmark_and_demangle_show_their_real_signatures():
    import inspect
    params = inspect.signature(gpujit.benchmark).parameters
    assert list(params)[:4] == ["func", "args", "kwargs", "n_repeat"]  # cupyx's, in its order
    assert params["func"].default is inspect.Parameter.empty  # required, no sentinel object
    assert "fn" not in params and not any("object object" in str(p.default) for p in params.values())
    assert str(inspect.signature(gpujit.demangle)).startswith("(name")
    assert gpujit.demangle("_Z5scalePfi") == "scale(float*, int)"


@pytest.mark.parametrize("call, named", [
    (lambda: gpujit.profile(json=5), "json must be a path"),
    (lambda: gpujit.profile(trace=5), "trace must be a path"),
    (lambda: gpujit.profile(top="3"), "top must be an int"),
    (lambda: gpujit.profile(print="yes"), "print must be True or False"),
    (lambda: build(defines={"V": 1}).kernel(5), "name must be a str"),
    (lambda: build(defines={"V": 1}).kernel("gj_args", signature=5), "signature must be a str"),
    (lambda: build(defines={"V": 1}).symbol(5), "name must be a str"),
    (lambda: gpujit.demangle(5), "name must be a str, not int"),
    (lambda: gpujit.benchmark(lambda: None, n_warmup="1"), "n_warmup must be an int, not str"),
    (lambda: gpujit.benchmark(lambda: None, n_repeat=2.5), "n_repeat must be an int, not float"),
    (lambda: gpujit.benchmark(lambda: None, max_duration="1"), "max_duration must be a number"),
    (lambda: gpujit.benchmark(lambda: None, timeout=None), "timeout must be a number"),
    (lambda: gpujit.benchmark(lambda: None, devices="0"), "devices must be a sequence of device numbers"),
    (lambda: gpujit.benchmark(lambda: None, devices=[0.5]), "devices[0] must be an int"),
    (lambda: gpujit.benchmark(lambda: None, name=5), "name must be a str"),
    (lambda: gpujit.benchmark(lambda: None, l2_flush="no"), "l2_flush must be True or False"),
    (lambda: gpujit.benchmark(lambda: None, fn=lambda: None), "fn"),
    (lambda: gpujit.timing_begin("kernels"), "cuda_filter must be an int"),
    (lambda: gpujit.timing_begin(gpujit.TIMING_KERNEL, timer=1), "timer must be a str"),
    (lambda: gpujit.timing_begin(synchronize="no"), "synchronize must be True or False"),
    (lambda: gpujit.timing_print([], indent=3), "indent must be a str"),
    (lambda: gpujit.timing_print(["row"]), "results must be a sequence of TimingResult"),
    (lambda: gpujit.timing_print([], sections="device"), "sections must be a sequence of str"),
    (lambda: gpujit.ScopedTimer(5), "name must be a str"),
    (lambda: gpujit.ScopedTimer("t", cuda_filter="all"), "cuda_filter must be an int"),
    (lambda: gpujit.ScopedTimer("t", dict=[]), "dict must be a dict"),
    (lambda: gpujit.ScopedTimer("t", report_func=5), "report_func must be callable"),
])
def test_every_wrong_argument_is_a_type_error_naming_it(call, named):
    with pytest.raises(TypeError) as e:
        call()
    assert named in str(e.value), str(e.value)


def test_help_lists_the_package_not_its_injection_library():
    import pydoc
    text = pydoc.render_doc(gpujit, renderer=pydoc.plaintext)
    assert "PACKAGE CONTENTS" in text and "module" in text
    assert "libgpujit_inject" not in text and "gpujit-python-hook" not in text


def test_a_cache_hit_says_what_compile_it_saved(tmp_path):
    first = gpujit.build(source=SRC, name="gj_args.cu", arch="sm_90", defines={"V": 1}, cache=str(tmp_path))
    hit = gpujit.build(source=SRC, name="gj_args.cu", arch="sm_90", defines={"V": 1}, cache=str(tmp_path))
    assert (first.cache_hit, first.saved_compile_ms) == (False, None) and first.compile_ms > 0
    assert hit.cache_hit and hit.compile_ms == 0.0
    assert hit.saved_compile_ms == pytest.approx(first.compile_ms, rel=0.01), (hit.saved_compile_ms, first.compile_ms)
    assert "cache hit (saved %.1f ms of compiling)" % hit.saved_compile_ms in repr(hit)
