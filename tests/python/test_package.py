"""The Python package on a machine without a GPU: builds through the cache, errors as
exceptions, bad arguments refused with a clear message, the cache and the bundled command."""
import json
import math
import os
import subprocess
import sys

import pytest

import gpujit

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
SRC = 'extern "C" __global__ void gj_py(float *x) { x[threadIdx.x] *= 2.0f; }\n'


def test_build_from_source_then_a_hit(tmp_path):
    m = gpujit.build(source=SRC, name="gj_py.cu", cache=tmp_path, arch="sm_90")
    assert m.kernels == ["gj_py"]
    assert m.cache_hit is False and m.compile_ms > 0
    assert m.output == "cubin" and m.arch == "sm_90" and m.image[:4] == b"\x7fELF"
    again = gpujit.build(source=SRC, name="gj_py.cu", cache=tmp_path, arch="sm_90")
    assert again.cache_hit is True
    assert again.image == m.image
    assert gpujit.cache.stats(tmp_path)["hits"] == 1
    assert gpujit.cache.clear(tmp_path) == 1
    assert gpujit.cache.stats(tmp_path)["entries"] == 0


def test_why_a_build_missed(tmp_path):
    """A compiled module says why the cache missed; a hit, or no cache, says nothing."""
    m = gpujit.build(source=SRC, name="why.cu", cache=tmp_path, arch="sm_90")
    assert m.miss_reason == "never built with this source, these options and this toolkit"
    assert gpujit.build(source=SRC, name="why.cu", cache=tmp_path, arch="sm_90").miss_reason is None
    m = gpujit.build(source=SRC, name="why.cu", cache=tmp_path, arch="sm_89", defines={"N": 2})
    assert m.cache_hit is False and m.miss_reason == "since its last build: arch sm_90 -> sm_89; -D N=2 added"
    m = gpujit.build(source=SRC.replace("2.0f", "3.0f"), name="why.cu", cache=tmp_path, arch="sm_89",
                     defines={"N": 2})
    # an in-memory source: no file changed, and the miss says so
    assert m.miss_reason.startswith("since its last build: ") and "no build of this source on record" in m.miss_reason
    assert gpujit.build(source=SRC, name="why.cu", cache=False, arch="sm_90").miss_reason is None


def test_a_one_line_source_is_source(tmp_path, monkeypatch):
    """'#include "kern.cuh"' is source when given as source=, a path only when given as the path."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kern.cuh").write_text('extern "C" __global__ void from_header(float *x) { x[0] = 1; }\n')
    assert gpujit.build(source='#include "kern.cuh"', cache=False, arch="sm_90").kernels == ["from_header"]
    with pytest.raises(FileNotFoundError):
        gpujit.build('#include "kern.cuh"', cache=False, arch="sm_90")


def test_source_text_hits_from_any_directory(tmp_path, monkeypatch):
    """Source text is keyed by its content, options and what it includes, not by the directory a
    script runs from; a header it includes from the working directory is checked there."""
    cache = tmp_path / "cache"
    cache.mkdir()
    plain = 'extern "C" __global__ void k(float *x) { x[0] = 1; }'
    with_header = '#include "kern.cuh"\nextern "C" __global__ void k(float *x) { x[0] = SCALE; }'
    for d, scale in (("a", 1), ("b", 2), ("c", 1)):
        (tmp_path / d).mkdir()
        (tmp_path / d / "kern.cuh").write_text("#define SCALE %d.0f\n" % scale)
    got = []
    for d in ("a", "b", "a", "c"):
        monkeypatch.chdir(tmp_path / d)
        got.append((gpujit.build(source=plain, cache=cache, arch="sm_90").cache_hit,
                    gpujit.build(source=with_header, cache=cache, arch="sm_90").cache_hit))
    # plain: miss, then hits everywhere; with a header: b's differs (a miss), a hits, c's equals a's (a hit)
    assert got == [(False, False), (True, False), (True, True), (True, True)]


def test_build_a_file_with_name_expressions(tmp_path):
    src = tmp_path / "scale.cu"
    src.write_text("template <typename T> __global__ void scale(T *x, T a) { x[threadIdx.x] *= a; }\n")
    m = gpujit.build(src, name_expressions=["scale<float>", "scale<double>"], cache=False, arch="sm_90")
    assert m.cache_hit is None
    assert m.symbol("scale<float>").startswith("_Z") and m.symbol("scale<float>") != m.symbol("scale<double>")
    assert m.kernel("scale<float>").params == [("pointer", 8), ("float32", 4)]
    assert m.kernel("scale<double>").params == [("pointer", 8), ("float64", 8)]
    with pytest.raises(KeyError, match="no kernel 'nope'"):
        m.kernel("nope")
    saxpy = gpujit.build(os.path.join(EXAMPLES, "saxpy.cu"), cache=False, arch="compute_90")
    assert saxpy.output == "ptx" and "saxpy" in saxpy.kernels


def test_compile_error_names_file_line_column():
    with pytest.raises(gpujit.CompileError) as e:
        gpujit.build(source='extern "C" __global__ void k(float *x) {\n  x[0] = undefined_name;\n}\n', name="broken.cu",
                     cache=False)
    assert isinstance(e.value, gpujit.GpujitError) and e.value.code == -6 and e.value.name == "GPUJIT_ECOMPILE"
    assert "broken.cu:2:" in str(e.value) and "undefined_name" in e.value.log


def test_defines_and_options(tmp_path):
    src = 'extern "C" __global__ void k(int *x) { x[0] = N; }\n'
    with pytest.raises(gpujit.CompileError):
        gpujit.build(source=src, cache=False)
    assert gpujit.build(source=src, defines={"N": 4}, options=["-std=c++17"], cache=False).kernels == ["k"]
    trace = tmp_path / "t.json"
    gpujit.build(source=src, defines=["N=5"], cache=False, time_trace=trace)
    assert json.loads(trace.read_text())["traceEvents"]


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="options must be a sequence of str"):
        gpujit.build(source=SRC, options="-G", cache=False)
    with pytest.raises(TypeError, match="path must be a file path"):
        gpujit.build(123)
    with pytest.raises(ValueError, match="empty"):
        gpujit.build("   ")
    with pytest.raises(TypeError, match="one of the two"):
        gpujit.build()
    with pytest.raises(TypeError, match="one of the two"):
        gpujit.build("k.cu", source=SRC)
    # text given as the path: refused, saying what to write, never guessed
    with pytest.raises(TypeError, match=r"pass it as gpujit.build\(source=...\)"):
        gpujit.build(SRC, cache=False)
    with pytest.raises(gpujit.InvalidArgumentError, match="sm_1"):
        gpujit.build(source=SRC, arch="sm_1", cache=False)
    with pytest.raises(gpujit.NotFoundError):
        gpujit.build(os.path.join(EXAMPLES, "no_such_file.cu"), cache=False)


def test_every_error_code_has_one_class():
    classes = [c for c in vars(gpujit._errors).values() if isinstance(c, type) and issubclass(c, gpujit.GpujitError)
               and c is not gpujit.GpujitError]
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes)) == 18 and min(codes) == -18 and max(codes) == -1


def test_names_people_can_read():
    assert gpujit.demangle("_Z5scaleIfEvPT_S0_i") == "void scale<float>(float*, float, int)"
    assert gpujit.demangle("saxpy") == "saxpy" and gpujit.demangle("_Znot_a_symbol") == "_Znot_a_symbol"
    from gpujit.bench import _name_of

    class K:  # what a gpujit.Kernel answers: the name it was asked for
        name = "_Z5scaleIfEvPT_S0_i"

    def saxpy_step():
        pass
    assert _name_of(K()) == "void scale<float>(float*, float, int)"
    assert _name_of(saxpy_step) == "saxpy_step"  # as cupyx.profiler.benchmark names it


def test_errors_are_the_builtin_exceptions_users_catch(tmp_path):
    import pickle
    import traceback
    with pytest.raises(FileNotFoundError) as e:
        gpujit.build(tmp_path / "missing.cu")
    assert isinstance(e.value, gpujit.NotFoundError) and e.value.errno == 2 and "missing.cu" in str(e.value)
    # printed under the package's name, not its private module's
    assert traceback.format_exception_only(e.type, e.value)[0].startswith("gpujit.NotFoundError: ")
    assert type(pickle.loads(pickle.dumps(e.value))) is gpujit.NotFoundError
    (tmp_path / "notacache").mkdir()
    (tmp_path / "notacache" / "mine.txt").write_text("the user's own file")
    with pytest.raises(ValueError) as v:  # a directory that is no gpujit cache: an invalid argument
        gpujit.cache.stats(tmp_path / "notacache")
    assert isinstance(v.value, gpujit.InvalidArgumentError)
    assert issubclass(gpujit.InvalidArgumentError, ValueError) and issubclass(gpujit.GpujitIOError, OSError)
    assert issubclass(gpujit.OutOfMemoryError, MemoryError) and issubclass(gpujit.CompileError, gpujit.GpujitError)


def test_the_bundled_command_and_profile(tmp_path):
    out = subprocess.run([sys.executable, "-m", "gpujit", "--version"], stdout=subprocess.PIPE, text=True, check=True)
    assert out.stdout.startswith("gpujit ")
    j = tmp_path / "p.json"
    code = "import gpujit; gpujit.build(source=%r, cache=False)" % SRC
    subprocess.run([sys.executable, "-m", "gpujit", "profile", "-q", "--no-cupti", "--json", str(j), "--",
                    sys.executable, "-c", code], check=True)
    p = json.loads(j.read_text())
    assert p["totals"]["compiles"] >= 1 and p["totals"]["exit_status"] == 0


def test_the_installed_command_is_the_binary(tmp_path):
    """`gpujit` on PATH is the program itself, not a Python script that execs it, and it finds the
    package's injection library and worker from the environment's bin/."""
    exe = os.path.join(os.path.dirname(sys.executable), "gpujit")
    target = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(gpujit.__file__))), "bin", "gpujit")
    if not os.path.exists(exe):
        exe = target  # pip install --target T puts the command in T/bin and the package in T/gpujit
    if not os.path.exists(exe):
        pytest.skip("no gpujit command beside %s or in %s" % (sys.executable, os.path.dirname(target)))
    with open(exe, "rb") as f:
        assert f.read(4) == b"\x7fELF"
    j = tmp_path / "p.json"
    subprocess.run([exe, "profile", "-q", "--no-cupti", "--json", str(j), "--", sys.executable, "-c", "pass"], check=True)
    assert json.loads(j.read_text())["totals"]["exit_status"] == 0
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "k.cu").write_text(SRC)
    r = subprocess.run([exe, "build", "-j", "2", "--no-cache", str(tmp_path / "proj")], capture_output=True, text=True)
    assert r.returncode == 0 and "1 built" in r.stdout + r.stderr, r.stdout + r.stderr


def test_the_wheel_installs_man_page_and_completions():
    """The environment's share/ has `man gpujit` and the bash and zsh completions, as the bin/
    beside it has the command."""
    if not os.path.exists(os.path.join(os.path.dirname(sys.executable), "gpujit")):
        pytest.skip("gpujit not installed into %s (installed with --target?)" % sys.prefix)
    share = os.path.join(sys.prefix, "share")
    with open(os.path.join(share, "man", "man1", "gpujit.1")) as f:
        assert f.readline().startswith(".TH GPUJIT 1")
    with open(os.path.join(share, "bash-completion", "completions", "gpujit")) as f:
        assert "complete -F _gpujit gpujit" in f.read()
    with open(os.path.join(share, "zsh", "site-functions", "_gpujit")) as f:
        assert f.readline().strip() == "#compdef gpujit"


def test_trace_analyze(tmp_path):
    t = tmp_path / "build.json"
    gpujit.build(os.path.join(EXAMPLES, "saxpy.cu"), cache=False, time_trace=t)
    r = gpujit.trace.analyze(t)
    assert r["files"] == 1 and r["events"] > 0
    phases = {row["name"]: row for row in r["tables"]["phases"]}
    assert phases and all(row["total_ms"] >= 0 and row["count"] >= 1 for row in phases.values())
    assert [row["name"] for row in r["tables"]["modules"]] == ["saxpy"]
    with pytest.raises(gpujit.NotFoundError):
        gpujit.trace.analyze(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(gpujit.ParseError, match="bad.json"):
        gpujit.trace.analyze(tmp_path / "bad.json")


def test_trace_diff_gates(tmp_path):
    base, new = tmp_path / "base", tmp_path / "new"
    base.mkdir(), new.mkdir()
    small = 'extern "C" __global__ void k(float *x) { x[0] = 1; }\n'
    big = "#include <cub/block/block_reduce.cuh>\n" + small
    for i in range(2):
        gpujit.build(source=small, name="k.cu", cache=False, time_trace=base / ("%d.json" % i))
        gpujit.build(source=big, name="k.cu", cache=False, time_trace=new / ("%d.json" % i))
    d = gpujit.trace.diff(base, new, fail_above_pct=10)
    assert d["total"]["new_ms"] > d["total"]["base_ms"] and d["total"]["change"] == "slower"
    assert d["verdict"]["gated"] and d["verdict"]["failed"]
    same = gpujit.trace.diff(base, base)
    assert not same["verdict"]["gated"] and not same["verdict"]["failed"] and same["total"]["delta_ms"] == 0
    with pytest.raises(ValueError, match="fail_above_pct"):
        gpujit.trace.diff(base, new, fail_above_pct=-1)


def test_cache_limit_sizes_as_ccache(tmp_path):
    """limit(5) is 5 GiB, as ccache -M 5: it once set 5 bytes and evicted every entry, silently."""
    a = tmp_path / "a"
    gpujit.build(source=SRC, cache=a, arch="sm_90")
    r = gpujit.cache.limit(5, directory=a)
    assert r == {"limit_bytes": 5 << 30, "source": "the cache's setting", "evicted": 0, "evicted_bytes": 0}
    assert gpujit.cache.stats(a)["entries"] == 1
    assert gpujit.cache.limit("5", directory=a)["limit_bytes"] == 5 << 30
    assert gpujit.cache.limit(0.5, directory=a)["limit_bytes"] == 1 << 29
    assert gpujit.cache.limit("2GB", directory=a)["limit_bytes"] == 2000000000
    assert gpujit.cache.limit("2GiB", directory=a)["limit_bytes"] == 2 << 30
    assert gpujit.cache.limit("500MB", directory=a)["limit_bytes"] == 500000000
    assert gpujit.cache.limit(0, directory=a)["limit_bytes"] == 0
    assert "evicted" not in gpujit.cache.limit(directory=a)
    with pytest.raises(gpujit.InvalidArgumentError, match="invalid size '5m'.*a bare number is GiB"):
        gpujit.cache.limit("5m", directory=a)
    with pytest.raises(ValueError):
        gpujit.cache.limit(-1, directory=a)
    with pytest.raises(TypeError):
        gpujit.cache.limit(True, directory=a)
    r = gpujit.cache.limit("1B", directory=a)  # a limit that evicts says what it evicted
    assert r["evicted"] == 1 and r["evicted_bytes"] > 0
    assert gpujit.cache.stats(a)["entries"] == 0


def test_config_and_show_config(capsys):
    """One call says what gpujit runs with, as cupy.show_config() does: here, no driver, and why."""
    c = gpujit.config()
    assert c["gpujit"] == gpujit.__version__
    assert set(c) >= {"toolkit", "nvrtc", "nvjitlink", "ptxas", "cupti", "driver", "cache", "settings"}
    assert c["toolkit"]["problem"] is None and os.path.isdir(c["toolkit"]["root"])
    assert c["nvrtc"]["version"].split(".")[0].isdigit() and c["nvrtc"]["path"]
    assert c["nvjitlink"]["version"] and c["nvjitlink"]["path"]
    assert c["cache"]["path"] and c["cache"]["limit_source"]
    d = c["driver"]
    assert (d["version"] is None) == bool(d["problem"])
    assert isinstance(d["devices"], int)
    cli = json.loads(subprocess.run([sys.executable, "-m", "gpujit", "version", "--json"], capture_output=True,
                                    text=True, check=True).stdout)
    for key in ("gpujit", "toolkit", "nvrtc", "nvjitlink", "ptxas", "cupti", "driver", "cache"):
        assert cli[key] == c[key], key
    gpujit.show_config()
    out = capsys.readouterr().out
    assert out.startswith("gpujit ")
    assert "NVRTC" in out and "nvJitLink" in out and "CUPTI" in out and "cache limit" in out
    assert ("no driver: " + (d["problem"] or "")) in out if d["problem"] else "device" in out


def test_cache_limit_export_import(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    m = gpujit.build(source=SRC, cache=a, arch="sm_90")
    assert gpujit.cache.limit(directory=a)["limit_bytes"] == 0
    assert gpujit.cache.limit("2MiB", directory=a)["limit_bytes"] == 2 << 20
    with pytest.raises(gpujit.InvalidArgumentError):
        gpujit.cache.limit("lots", directory=a)
    archive = tmp_path / "c.tar.gz"
    assert gpujit.cache.export(archive, directory=a) == 1
    r = gpujit.cache.import_(archive, directory=b)
    assert r["entries"] == 1 and r["rejected"] == 0
    hit = gpujit.build(source=SRC, cache=b, arch="sm_90")
    assert hit.cache_hit is True and hit.image == m.image
    (tmp_path / "junk.tar").write_bytes(b"not an archive")
    with pytest.raises(gpujit.GpujitError):
        gpujit.cache.import_(tmp_path / "junk.tar", directory=b)


REGION = '''
import json, sys
import gpujit
gpujit.build(source='extern "C" __global__ void before_region(float *x) { x[0] = 1; }', name="before.cu", cache=False)
with gpujit.profile(json=sys.argv[1], print=False) as p:
    for _ in range(2):
        gpujit.build(source='extern "C" __global__ void in_region(float *x) { x[0] = 2; }', name="inside.cu", cache=False)
gpujit.build(source='extern "C" __global__ void after_region(float *x) { x[0] = 3; }', name="after.cu", cache=False)
with gpujit.profile(title="the printed block"):  # by default the block's table goes to stderr at its end
    gpujit.build(source='extern "C" __global__ void printed(float *x) { x[0] = 4; }', name="printed.cu", cache=False)
try:  # under `gpujit profile` its --schedule decides the steps
    with gpujit.profile(schedule=gpujit.schedule(active=1)):
        pass
    refused = ""
except gpujit.UnsupportedError as e:
    refused = str(e)
print(json.dumps({"refused": refused, "inprocess": p.inprocess, "modules": [(m["name"], m["compiles"], m["repeats"]) for m in p.modules if m["origin"] != "ptxas"],
                  "compiles": p.totals["compiles"], "processes": p.totals["processes"], "report": p.report,
                  "data": p.data, "written": json.load(open(sys.argv[1]))}))
'''


def _same(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-13, abs_tol=1e-300)
    return a == b and type(a) is type(b) or (isinstance(a, int) and isinstance(b, int) and a == b)


def test_profile_of_a_block(tmp_path):
    script = tmp_path / "region.py"
    script.write_text(REGION)
    out = tmp_path / "region.json"
    r = subprocess.run([sys.executable, "-m", "gpujit", "profile", "-q", "--", sys.executable, str(script), str(out)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    # the block's two compiles of one source, one a repeat; the builds before and after are not its
    assert got["modules"] == [[str(tmp_path / "inside.cu"), 2, 1]]
    # each build is NVRTC's compile and (lean modules) the ptxas process gpujit runs after it: one
    # build, the ptxas a later stage of that compile (stage_of), not a compile of its own
    nvrtc = [c for c in got["data"]["compiles"] if c["kind"] == "nvrtc"]
    ptxas = [c for c in got["data"]["compiles"] if c["kind"] != "nvrtc"]
    assert len(nvrtc) == 2 and {c["kind"] for c in ptxas} <= {"ptxas"} and got["compiles"] == 2
    ids = {c["id"] for c in nvrtc}
    assert all(c["stage_of"] in ids for c in ptxas) and len({c["stage_of"] for c in ptxas}) == len(ptxas), ptxas
    assert got["processes"] == 1
    assert "JIT compile" in got["report"] and "1 identical repeat" in got["report"]
    assert "the printed block" in r.stderr and "printed.cu" in r.stderr, r.stderr
    assert json.loads(out.read_text())["totals"]["compiles"] == got["compiles"]
    # the block's tables come from the structs, not from its JSON text, and say the same (cJSON
    # prints a double in 15 digits when that reads back within an ulp)
    written = got["written"]
    assert list(written)[:2] == ["format", "version"] and written["format"] == "gpujit-profile"
    assert _same(got["data"], {k: v for k, v in written.items() if k not in ("format", "version")})
    assert [c["repeat"] for c in nvrtc] == [False, True]
    assert got["data"]["processes"][0]["pid"] > 0 and got["data"]["options"] == {"lineinfo": False, "nvrtc_trace": False}
    # the block read what `gpujit profile` recorded (a plain python records in-process: test_inproc.py)
    assert got["inprocess"] is False and "whose --schedule and --step decide the steps" in got["refused"]


def test_profile_steps(tmp_path):
    """gpujit.profile.load(...).steps: the active steps of a records directory with steps
    (tests/profile/make_step_records.py, its numbers worked out by hand there and in
    tests/cli/cases/profile_steps.sh), each with its devices, streams and top kernels (by_device,
    by_stream, top_kernels)."""
    make = os.path.join(os.path.dirname(__file__), "..", "profile", "make_step_records.py")
    subprocess.run([sys.executable, make, str(tmp_path / "rec")], check=True)
    p = gpujit.profile.load(tmp_path / "rec", json=tmp_path / "p.json")
    steps = p.steps
    assert [(s["pid"], s["step"], s["complete"], s["verdict"]) for s in steps] == [
        (5100, 3, True, "mixed"), (5100, 4, True, "launch-bound"), (5200, 0, False, "gpu-bound")]
    s3 = steps[0]
    assert s3["schedule"] == "wait=2,warmup=1,active=2,repeat=1 (steps: api)" and s3["src"] == "api"
    assert (s3["launches"], s3["kernels"], s3["copies"], s3["gaps"]) == (6, 6, 1, 5)
    assert s3["busy_ms"] == pytest.approx(0.675) and s3["host_wait_ms"] == pytest.approx(0.015)
    assert (s3["gap_median_us"], s3["gap_p90_us"], s3["gap_max_us"]) == pytest.approx((70, 200, 200))
    assert [(x["stream"], x["ops"], x["gaps"]) for x in s3["by_stream"]] == [(7, 5, 4), (9, 2, 1)]
    assert [x["host_wait_ms"] for x in s3["by_stream"]] == pytest.approx([0.165, 0.2])
    assert [(x["device"], x["ops"]) for x in s3["by_device"]] == [(0, 7)]
    assert [(k["name"], k["count"]) for k in s3["top_kernels"]] == [("_Z4gemmPfS_", 3), ("relu", 2), ("bias", 1)]
    assert steps[1]["host_wait_pct"] == pytest.approx(81) and steps[2]["busy_pct"] == pytest.approx(95)
    assert "launch-bound: the GPU idled 81 % of step 4" in str(p)
    assert _same(p.data["steps"], json.loads((tmp_path / "p.json").read_text())["steps"])


def test_saved_profile_loaded(tmp_path):
    """gpujit.profile.load: a records directory (--keep) and a saved profile (-o) read back as the
    report has them, without running anything; saved again, the same rows; bad files refused."""
    make = os.path.join(os.path.dirname(__file__), "..", "profile", "make_records.py")
    subprocess.run([sys.executable, make, str(tmp_path / "rec")], check=True)
    saved, html, trace, j = (tmp_path / n for n in ("run.gjprof", "run.html", "run.trace.json", "run.json"))
    a = gpujit.profile.load(tmp_path / "rec", save=saved, html=html, trace=trace, json=j)
    assert a.totals["launches"] > 0 and a.modules and a.devices, a.data
    assert sum(m["launches"] for m in a.modules) == a.totals["launches"]
    assert _same(a.totals, json.loads(j.read_text())["totals"])  # the JSON prints doubles in 15 digits
    assert html.read_text().lstrip().lower().startswith("<!doctype html")
    assert json.loads(trace.read_text())["traceEvents"]
    b = gpujit.profile.load(saved, top=0)
    assert b.modules == a.modules and b.totals == a.totals and b.notes == a.notes
    assert "JIT compile" in str(b) and isinstance(b.notes, list)
    with pytest.raises(gpujit.NotFoundError):
        gpujit.profile.load(tmp_path / "nope.gjprof")
    (tmp_path / "bad.gjprof").write_bytes(b"not a tar at all" * 64)
    with pytest.raises(gpujit.CorruptError, match="not a gpujit saved profile"):
        gpujit.profile.load(tmp_path / "bad.gjprof")
