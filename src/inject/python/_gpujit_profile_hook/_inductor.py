"""torch.compile: per compiled graph (a Dynamo frame), the whole compile from Dynamo's public
start and end callbacks (``torch._dynamo.callback``), with its parts from Dynamo's compilation
metrics (Dynamo, AOTAutograd, Inductor, its code generation, Triton's compiles) and whether the
FX-graph or AOTAutograd cache served it. Triton's own compiles — in this process or in Inductor's
compile workers — are recorded by the Triton adapter and nested in this frame by the report;
kernels launched while the frame compiles, and while Inductor's autotuner benchmarks a kernel's
configurations at its first call, count as compile work (an autotuning span per kernel)."""
import sys

from . import _record, _watch

# CompilationMetrics fields (microseconds or seconds) and the part each one is
PARTS = (
    ("dynamo_cumulative_compile_time_us", "dynamo", 1e3),
    ("aot_autograd_cumulative_compile_time_us", "aot_autograd", 1e3),
    ("inductor_cumulative_compile_time_us", "inductor", 1e3),
    ("inductor_code_gen_cumulative_compile_time_us", "inductor_codegen", 1e3),
    ("triton_compile_time_us", "triton_compile", 1e3),
)

_open = {}  # compile id -> (t0, tid, counters before)
_lock = _record.ChildLock()  # a forked compile worker gets its own


def _version():
    return "torch " + str(getattr(sys.modules.get("torch"), "__version__", "?"))


def _counters():
    utils = sys.modules.get("torch._dynamo.utils")
    c = getattr(utils, "counters", None)
    if c is None:
        return {}
    out = {}
    for group, key in (("inductor", "fxgraph_cache_hit"), ("inductor", "fxgraph_cache_miss"),
                       ("aot_autograd", "autograd_cache_hit"), ("aot_autograd", "autograd_cache_miss")):
        try:
            out[key] = int(c[group][key])
        except Exception:
            out[key] = 0
    return out


def _metrics_of(compile_id):
    utils = sys.modules.get("torch._dynamo.utils")
    get = getattr(utils, "get_compilation_metrics", None)
    if get is None:
        return None
    for m in reversed(list(get())):
        if str(getattr(m, "compile_id", "")) == compile_id:
            return m
    return None


def _start(args):
    cid = str(getattr(args, "compile_id", "") or "")
    with _lock:
        _open[cid] = (_record.now(), _record._tid(), _counters())


def _end(args):
    t1 = _record.now()
    cid = str(getattr(args, "compile_id", "") or "")
    with _lock:
        t0, tid, before = _open.pop(cid, (None, None, {}))
    if t0 is None:
        return
    after = _counters()
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    cache = "hit" if delta.get("fxgraph_cache_hit", 0) > 0 and delta.get("fxgraph_cache_miss", 0) == 0 else \
        "miss" if delta.get("fxgraph_cache_miss", 0) > 0 else ""
    m = _metrics_of(cid)
    parts, name = [], "frame %s" % (cid or "?")
    if m is not None:
        name = "%s [%s]" % (getattr(m, "co_name", None) or "frame", cid)
        for field, part, scale in PARTS:
            v = getattr(m, field, None)
            if v:
                parts.append((part, None, int(v * scale)))  # a length; its start is not known
    # Inductor autotunes inside its graph's compile (its kernels' configs, benchmarked on the GPU):
    # kernels that run in the compile's span are its work, not the program's launches
    _record.unit("inductor", name, t0, t1, parts, cache=cache, key=cid, tid=tid, version=_version(), benchmarks=True,
                 detail=" ".join("%s=%d" % (k, v) for k, v in sorted(delta.items()) if v))


def install(dynamo):
    try:
        import torch._dynamo.callback as cb  # part of torch._dynamo, which the program imported
    except ImportError:
        raise RuntimeError("%s has no torch._dynamo.callback" % _version())
    on_start, on_end = getattr(cb, "on_compile_start", None), getattr(cb, "on_compile_end", None)
    if on_start is None or on_end is None:
        raise RuntimeError("%s has no on_compile_start/on_compile_end" % _version())

    def started(*args, **kw):
        try:
            _start(args[0] if args else None)
        except Exception:
            pass

    def ended(*args, **kw):
        try:
            _end(args[0] if args else None)
        except Exception:
            pass

    on_start(started)
    on_end(ended)


def _autotuned(t0, t1, frame):
    self = frame.f_locals.get("self") if frame is not None else None
    meta = getattr(self, "inductor_meta", None) or {}
    kernel = meta.get("kernel_name") or getattr(getattr(self, "fn", None), "__name__", "kernel")
    _record.unit("inductor", "autotune %s" % kernel, t0, t1, (), key=str(kernel), version=_version(), autotune=True)


def install_autotune(heuristics):
    """Inductor's autotuner benchmarks a kernel's configurations at its first call, after the
    frame compiled: each benchmark is a span of compile work, tied to the kernel it tunes. Its
    method is watched through _watch (sys.monitoring events local to its code, Python 3.12+);
    CachingAutotuner stays Inductor's own."""
    cls = getattr(heuristics, "CachingAutotuner", None)
    name = next((m for m in ("autotune_to_one_config", "benchmark_all_configs") if hasattr(cls, m)), None)
    code = getattr(_watch.unwrapped(getattr(cls, name)), "__code__", None) if cls is not None and name else None
    if code is None:
        raise RuntimeError("%s has no CachingAutotuner.autotune_to_one_config" % _version())
    why = _watch.watch(code, _autotuned)
    if why is not None:
        _record.note("inductor-autotune", why + ": Inductor's autotuning launches are counted as the program's")
