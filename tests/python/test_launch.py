"""Kernels, timers and benchmarks without a GPU: parameter tables, signatures, every argument
refused before the device is touched, the report tables and cupyx's line format. What needs a
GPU is in test_gpu.py (skipped here, with the reason)."""
import io

import pytest

import gpujit

numpy = pytest.importorskip("numpy")

SRC = r'''
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
template <typename T> __global__ void scale(T *x, T a, int n)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
struct Pair { float a; int b; };
__global__ void take(Pair p, bool flag, unsigned char c, __half h) {}
'''


@pytest.fixture(scope="module")
def mod():
    return gpujit.build(source="#include <cuda_fp16.h>\n" + SRC, name="launch.cu", name_expressions=["scale<float>", "take"],
                        cache=False, arch="sm_90")


def test_parameter_tables(mod):
    assert mod.kernel("saxpy").params == [("unknown", 4), ("unknown", 4), ("unknown", 8), ("unknown", 8)]
    assert mod.kernel("scale<float>").params == [("pointer", 8), ("float32", 4), ("int32", 4)]
    assert mod.kernel("take").params == [("record", 8), ("bool", 1), ("uint8", 1), ("float16", 2)]
    k = mod.kernel("saxpy", signature="int n, float a, const float *x, float *y")
    assert k.params == [("int32", 4), ("float32", 4), ("pointer", 8), ("pointer", 8)]
    assert mod.kernel("saxpy", signature="int n, float a, const float *x, float *y") is k  # kept
    assert repr(k) == "<gpujit.Kernel saxpy(int32, float32, pointer, pointer)>"
    assert mod.kernel("scale<float>").symbol.startswith("_Z5scaleIfEv")


def test_signatures_are_checked_against_the_image(mod):
    with pytest.raises(ValueError, match="parameter 2 is float64 .8 bytes. but the kernel's is 4 bytes"):
        mod.kernel("saxpy", signature="int n, double a, const float *x, float *y")
    with pytest.raises(ValueError, match="has 3 parameters; the kernel has 4"):
        mod.kernel("saxpy", signature="int, float, float *")
    with pytest.raises(ValueError, match="parameter 2 is int32 but the kernel's symbol says float32"):
        mod.kernel("scale<float>", signature="float *x, int a, int n")
    with pytest.raises(gpujit.InvalidArgumentError, match="parameter 1 .'float2 v'. is not a type"):
        mod.kernel("saxpy", signature="float2 v, float, float *, float *")
    with pytest.raises(KeyError, match="no kernel 'nope'"):
        mod.kernel("nope")


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((1, 1, 3, 1.0, 0, 0), {}, TypeError, r"parameter 1 \(untyped\) of saxpy: the kernel is extern \"C\", so its 4-byte"),
    ((1, 1, numpy.int64(3), numpy.float32(1), 0, 0), {}, TypeError, "a 8-byte NumPy scalar for a 4-byte parameter"),
    ((1, 1, numpy.int32(3), numpy.float32(1), numpy.zeros(3, numpy.float32), 0), {}, ValueError,
     r"parameter 3 \(untyped\) of saxpy: the array is not in GPU memory \(DLPack device type 1\)"),
    ((1, 1, numpy.int32(3), numpy.float32(1), 0), {}, TypeError, "saxpy takes 4 kernel arguments .3 given."),
    ((1,), {}, TypeError, "grid and block are missing"),
    (((1, 0), 1, numpy.int32(3), numpy.float32(1), 0, 0), {}, ValueError, r"grid\[1\] must be an int of at least 1"),
    ((1, (1, 1, 1, 1), numpy.int32(3), numpy.float32(1), 0, 0), {}, TypeError, "block must be an int or a tuple"),
    ((1, 1, numpy.int32(3), numpy.float32(1), 0, 0), {"stream": "s"}, TypeError, "stream must be None, an int"),
    ((1, 1, numpy.int32(3), numpy.float32(1), 0, 0), {"shared": -1}, ValueError, "shared must be 0 or more bytes"),
    ((1, 1, numpy.int32(3), numpy.float32(1), 0, 0), {"bogus": 1}, TypeError, "only keyword arguments are shared= and stream="),
    ((1, 1, numpy.int32(3), numpy.float32(1), "x", 0), {}, TypeError, "cannot pass a str"),
])
def test_bad_launch_arguments_are_refused_before_the_device(mod, args, kwargs, error, match):
    with pytest.raises(error, match=match):
        mod.kernel("saxpy")(*args, **kwargs)


def test_typed_parameters_refuse_what_does_not_fit(mod):
    scale, take = mod.kernel("scale<float>"), mod.kernel("take")
    with pytest.raises(OverflowError, match=r"parameter 3 \(int32\) of scale<float>: value out of range"):
        scale(1, 1, 0, 1.5, 2 ** 40)
    with pytest.raises(TypeError, match="a float for an integer parameter"):
        scale(1, 1, 0, 1.5, 2.0)
    with pytest.raises(TypeError, match="a float is no device array"):
        scale(1, 1, 1.5, 1.5, 2)
    with pytest.raises(TypeError, match="a NumPy scalar for a pointer parameter"):
        scale(1, 1, numpy.float32(1), 1.5, 2)
    with pytest.raises(OverflowError, match=r"parameter 3 \(uint8\)"):
        take(1, 1, b"\0" * 8, True, 256, 1.0)
    with pytest.raises(TypeError, match="3 bytes for a 8-byte parameter"):
        take(1, 1, b"abc", True, 1, 1.0)


def test_without_a_gpu_a_launch_says_why(mod):
    try:
        gpujit.synchronize()
    except (gpujit.NoDriverError, gpujit.NoDeviceError) as e:
        with pytest.raises(type(e)):
            mod.kernel("scale<float>")(1, 1, 0, numpy.float64(1.5), numpy.int16(2))
    else:
        pytest.skip("a GPU is here: tests/python/test_gpu.py covers launches")


def _result(device, name, kind, ms, nbytes=0):
    return gpujit.TimingResult({"device": device, "name": name, "kind": kind, "elapsed_ms": ms, "start_us": 0.0,
                                "host_us": 0.0, "launch_us": 0.0, "bytes": nbytes, "graph_node": 0, "missing": False})


def test_timing_tables_and_scoped_timer_without_gpu_work(capsys):
    results = [_result(0, "saxpy", 0, 0.5), _result(0, "saxpy", 0, 0.25), _result(1, "memcpy HtoD", 1, 1.0, 4096)]
    assert results[2].kind == "memcpy HtoD" and results[2].filter == gpujit.TIMING_MEMCPY
    out = io.StringIO()
    gpujit.timing_print(results, indent="> ", file=out)
    text = out.getvalue()
    assert all(line.startswith("> ") for line in text.splitlines())
    assert "saxpy" in text and "0.750" in text  # the activity summary adds both saxpy runs
    with pytest.raises(ValueError, match="sections are"):
        gpujit.timing_print(results, sections=("nope",))
    d = {}
    with gpujit.ScopedTimer("outer", dict=d) as t:
        with gpujit.ScopedTimer("inner", print=False):
            pass
    assert t.elapsed >= 0 and d["outer"] == [t.elapsed]
    assert "outer took" in capsys.readouterr().out
    with pytest.raises(ValueError, match="cuda_filter must select something"):
        gpujit.timing_begin(cuda_filter=0, synchronize=False)
    with pytest.raises(ValueError, match="timer must be"):
        gpujit.ScopedTimer("x", cuda_filter=gpujit.TIMING_ALL, timer="nvtx").__enter__()
    with pytest.raises(RuntimeError, match="timing_end without timing_begin"):
        gpujit.timing_end(synchronize=False)


def test_benchmark_line_is_cupyx_format():
    r = gpujit.BenchmarkResult("saxpy", {
        "stop": "max_samples", "elapsed_s": 0.1, "cpu": {}, "cpu_times": [0.010, 0.012, 0.014],
        "devices": [(0, {"median": 0.02}, [0.020, 0.021, 0.025])]})
    assert r.cpu_times == [1e-05, 1.2e-05, 1.4e-05] and r.devices == [0]
    # numpy: mean 12.000 us, std 1.633 us; GPU mean 22.000, std 2.160
    assert str(r) == ("saxpy               :    CPU:   12.000 us   +/- 1.633 (min:   10.000 / max:   14.000) us"
                      "     GPU-0:   22.000 us   +/- 2.160 (min:   20.000 / max:   25.000) us")
    with pytest.raises(ValueError, match="n_repeat must be a positive int"):
        gpujit.benchmark(lambda: None, n_repeat=0)
    with pytest.raises(TypeError, match="args must be a tuple"):
        gpujit.benchmark(lambda x: None, [1])
    # code written for cupyx.profiler.benchmark runs unchanged: (func, args, kwargs, n_repeat, *,
    # name, n_warmup, max_duration, devices)
    import inspect
    params = inspect.signature(gpujit.benchmark).parameters
    assert list(params)[:4] == ["func", "args", "kwargs", "n_repeat"]  # cupyx.profiler.benchmark's names
    assert params["n_repeat"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert {"name", "n_warmup", "max_duration", "devices"} <= set(params)
    with pytest.raises(ValueError, match="n_repeat must be a positive int"):
        gpujit.benchmark(lambda: None, (), {}, 0)  # n_repeat given positionally, as cupyx takes it
    with pytest.raises(ValueError, match="max_duration must be a positive"):
        gpujit.benchmark(lambda: None, (), {}, 10, max_duration=0)
    # Warp's ScopedTimer spelling
    assert gpujit.ScopedTimer("w", use_nvtx=True).nvtx is True and gpujit.ScopedTimer("w").nvtx is False
