"""JAX / XLA: per jitted function, its tracing, lowering and XLA backend compile (which runs ptxas
and nvlink, and autotuning on the GPU), from ``jax.monitoring``'s events, which carry the
function's name (jax 0.6.1+); persistent compilation-cache hits from the cache's events.

A compile is written when its backend compile ends (a cache hit is one too), declared to benchmark
(XLA's autotuning runs candidate kernels inside it). The module XLA loads when it first runs the
executable is tied to it by content: the cubin its ptxas wrote."""
import sys
import threading

from . import _record

TRACE = "/jax/core/compile/jaxpr_trace_duration"
LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND = "/jax/core/compile/backend_compile_duration"
CACHE_HIT = "/jax/compilation_cache/cache_hits"
CACHE_USED = "/jax/compilation_cache/compile_requests_use_cache"

_state = threading.local()


def _pending():
    if not hasattr(_state, "stages"):
        _state.stages, _state.cache = [], ""
    return _state


def _bare(fun_name):
    """'jit(f)' -> 'f' (lowering and backend events name the jit, tracing the function)."""
    return fun_name[4:-1] if fun_name.startswith("jit(") and fun_name.endswith(")") else fun_name


def _span(event, start_ns, end_ns, fun_name):
    s = _pending()
    if event == TRACE:
        s.stages = [("trace", start_ns, end_ns, fun_name)]
        s.cache = ""
    elif event == LOWER:
        if not s.stages or _bare(s.stages[-1][3]) != _bare(fun_name):
            s.stages = []
        s.stages.append(("lower", start_ns, end_ns, fun_name))
    elif event == BACKEND:
        stages = [x for x in s.stages if _bare(x[3]) == _bare(fun_name)]
        stages.append(("backend_compile", start_ns, end_ns, fun_name))
        # its time is its stages' (JAX's own measure): before the first compile, JAX starts its
        # backends between tracing and lowering, which is no compile's
        # XLA autotunes inside its backend compile (GEMM and fusion candidates, redzone checks):
        # kernels that run in its span are the compile's work, not the program's launches
        _record.unit("xla", fun_name, stages[0][1], end_ns, [(n, a, b) for n, a, b, _ in stages],
                     cache=s.cache or "", version=_version(), busy_ns=sum(b - a for _, a, b, _ in stages),
                     benchmarks=True)
        s.stages, s.cache = [], ""


def _version():
    jax = sys.modules.get("jax")
    return "jax " + str(getattr(jax, "__version__", "?"))


def install(jax):
    mon = getattr(jax, "monitoring", None)
    if mon is None:
        import jax.monitoring as mon  # noqa: F811 (a submodule of what the program imported)
    span = getattr(mon, "register_event_time_span_listener", None)
    duration = getattr(mon, "register_event_duration_secs_listener", None)
    event = getattr(mon, "register_event_listener", None)
    if span is None and duration is None:
        raise RuntimeError("%s has no jax.monitoring duration listener" % _version())

    def on_span(ev, start, end, **kw):
        try:
            if ev in (TRACE, LOWER, BACKEND):
                name = kw.get("fun_name")
                if name is None:
                    _record.note("xla-fun-name", "%s does not name the function its compile events are for: "
                                 "JAX compiles are not in this report" % _version())
                    return
                _span(ev, int(start * 1e9), int(end * 1e9), str(name))
        except Exception:
            pass

    def on_duration(ev, secs, **kw):
        try:
            if ev in (TRACE, LOWER, BACKEND):
                end = _record.now()
                on_span(ev, (end - secs * 1e9) / 1e9, end / 1e9, **kw)
        except Exception:
            pass

    def on_event(ev, **kw):
        try:
            s = _pending()
            if ev == CACHE_HIT:
                s.cache = "hit"
            elif ev == CACHE_USED and not s.cache:
                s.cache = "miss"
        except Exception:
            pass

    if span is not None:
        span(on_span)
    else:
        duration(on_duration)
    if event is not None:
        event(on_event)
