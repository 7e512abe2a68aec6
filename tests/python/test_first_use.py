"""Issue 46's first answers: cupyx's benchmark(func=), readable kernel names, a true miss reason,
no toolkit as its own exception."""
import os
import subprocess
import sys

import pytest

import gpujit


def test_benchmark_takes_func_as_cupyx_names_it():
    # func= is cupyx.profiler.benchmark's first parameter: the call reaches the device, and times
    # the function where there is one (one sample, named as cupyx names it)
    def noop():
        pass
    try:
        r = gpujit.benchmark(func=noop, n_repeat=1)
    except TypeError:
        raise
    except gpujit.GpujitError as e:  # no GPU here: the device's own error, not the arguments'
        assert "func" not in str(e), e
    else:
        assert (r.name, len(r.cpu_times)) == ("noop", 1), (r.name, r.cpu_times)
    with pytest.raises(TypeError, match="func must be callable"):
        gpujit.benchmark(func=5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'fn'"):  # one name, cupyx's
        gpujit.benchmark(lambda: None, fn=lambda: None)
    with pytest.raises(TypeError, match="args must be a tuple"):
        gpujit.benchmark(lambda: None, [1])


def test_unknown_kernel_lists_readable_names(tmp_path):
    m = gpujit.build(source="template <class T> __global__ void scale(T *x, T a, int n) {}",
                     name="scale.cu", name_expressions=["scale<float>"], arch="sm_90", cache=False)
    with pytest.raises(KeyError) as e:
        m.kernel("nope")
    assert "scale<float>(float*, float, int) [_Z5scaleIfEvPT_S0_i]" in str(e.value)


def test_unrelated_source_miss_says_no_build_on_record(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cache = str(tmp_path / "c")
    gpujit.build(source='extern "C" __global__ void a(int *x) { *x = 1; }', arch="sm_90", cache=cache)
    b = gpujit.build(source='extern "C" __global__ void b(int *x) { *x = 2; }', arch="sm_90", cache=cache)
    assert "no build of this source on record" in b.miss_reason, b.miss_reason
    assert "module.cu changed" not in b.miss_reason


def test_no_toolkit_is_its_own_exception(tmp_path):
    code = ("import gpujit\n"
            "try:\n"
            "    gpujit.build(source='extern \"C\" __global__ void k() {}', arch='sm_90', cache=False)\n"
            "except gpujit.NoToolkitError as e:\n"
            "    print(type(e).__name__, isinstance(e, FileNotFoundError), e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, CUDA_PATH="/opt/nope"))
    assert r.stdout.startswith("NoToolkitError True no CUDA toolkit at CUDA_PATH=/opt/nope"), r.stdout + r.stderr
    assert "pip install 'gpujit[cu13]'" in r.stdout


@pytest.mark.parametrize("call, named", [
    (lambda: gpujit.build(source="x", defines=123), "defines must be a mapping"),
    (lambda: gpujit.build(source="x", name=5), "name must be a str, not int"),
    (lambda: gpujit.build(source="x", time_trace=5), "time_trace must be a path"),
    (lambda: gpujit.build(source="x", include_dirs=5), "include_dirs must be a sequence of paths, not int"),
    (lambda: gpujit.build(source="x", options=5), "options must be a sequence of str, not int"),
    (lambda: gpujit.cache.stats(123), "directory must be a path"),
    (lambda: gpujit.cache.clear(123), "directory must be a path"),
    (lambda: gpujit.trace.analyze(123), "analyze() paths must be a path"),
    (lambda: gpujit.trace.diff(1, "b"), "base must be a path"),
    (lambda: gpujit.trace.diff("a", 2), "new must be a path"),
])
def test_type_errors_name_their_argument(call, named):
    with pytest.raises(TypeError) as e:
        call()
    assert named in str(e.value), str(e.value)
