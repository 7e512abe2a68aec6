"""Triton (alone, and under Inductor): per compiled specialization, its stages as Triton timed
them (``knobs.compilation.listener``: IR initialization, each lowering stage — ttir, ttgir, llir,
ptx, cubin (ptxas) — and storing the results) and whether Triton's cache served it; per module
loaded (``knobs.runtime.kernel_load_end_hook``, Triton 3.5+), the handle the compile's hash was
loaded as, which ties the specialization to its module (kernel names repeat across them)."""
import sys

from . import _record, _watch


def _version():
    return "triton " + str(getattr(sys.modules.get("triton"), "__version__", "?"))


def _get(obj, key, default=None):
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _compiled(src, metadata, times, cache_hit):
    t1 = _record.now()
    stages, total = [], 0
    for name, us in [("ir_initialization", _get(times, "ir_initialization", 0))] + \
            [(str(n), us) for n, us in (_get(times, "lowering_stages", None) or [])] + \
            [("store_results", _get(times, "store_results", 0))]:
        us = int(us or 0)
        stages.append([name, us])
        total += us
    t0, at = t1 - total * 1000, t1 - total * 1000
    spans = []
    for name, us in stages:  # one after another, as Triton runs them
        spans.append((name, at, at + us * 1000))
        at += us * 1000
    _inside_benchmark(t0)
    name = _get(metadata, "name", None) or getattr(src, "name", None) or "triton kernel"
    target = _get(metadata, "target", None)
    arch = _get(target, "arch", "") if target is not None else ""
    _record.unit("triton", str(name), t0, t1, spans, cache="hit" if cache_hit else "miss",
                 key=str(_get(metadata, "hash", "") or ""), detail=("sm_%s" % arch) if arch else "",
                 version=_version())


def _loaded(*args, **kw):
    """kernel_load_end_hook(module, function, name, metadata_group, hash)"""
    names = ("module", "function", "name", "metadata_group", "hash")
    got = dict(zip(names, args))
    got.update(kw)
    module, key = got.get("module"), got.get("hash")
    if isinstance(module, int) and key:
        _record.write("bind", fw="triton", key=str(key), module="0x%x" % module)


class _Listener:
    """``compilation_knobs.listener``, put on Triton's class as a data descriptor that keeps the
    value where the plain attribute kept it, in the instance's ``__dict__``: the program reads and
    sets its own listener (or None), and ``copy()``, ``scope()``, pickling and ``type()`` are as
    they were. Only Triton's ``compile()`` — which reads the slot once per compile, to call it —
    is handed ours chained to the program's, so the program's sees every call, in every thread."""

    def __init__(self, default, readers, ours):
        self.default, self.readers, self.ours = default, readers, ours

    def __get__(self, obj, cls=None):
        if obj is None:
            return self.default
        program = obj.__dict__.get("listener", self.default)
        try:
            code = sys._getframe(1).f_code
        except ValueError:
            return program
        if any(code is r for r in self.readers):
            return _chained(self.ours, program)
        return program

    def __set__(self, obj, value):
        obj.__dict__["listener"] = value

    def __delete__(self, obj):
        if "listener" not in obj.__dict__:
            raise AttributeError("listener")
        del obj.__dict__["listener"]


def _chained(ours, program):
    def listener(*args, **kw):
        try:
            ours(**kw)
        except Exception:
            pass
        if program is not None:
            return program(*args, **kw)

    return listener


def install(triton):
    knobs = getattr(triton, "knobs", None)
    comp = getattr(knobs, "compilation", None)
    cls = type(comp)
    owner = next((k for k in cls.__mro__ if "listener" in vars(k)), None)
    if comp is None or owner is None or not hasattr(comp, "__dict__"):
        raise RuntimeError("%s has no triton.knobs.compilation.listener" % _version())
    default = vars(owner)["listener"]
    if default is not None:  # a descriptor or a default listener: a slot this adapter does not know
        raise RuntimeError("%s: knobs.compilation.listener is not a plain slot (%s)"
                           % (_version(), type(default).__name__))
    # Triton's compile(), the one reader that calls the listener (triton.compile is the same function)
    readers = []
    for f in (getattr(sys.modules.get("triton.compiler.compiler"), "compile", None), getattr(triton, "compile", None)):
        code = getattr(_watch.unwrapped(f), "__code__", None) if f is not None else None
        if code is not None and all(code is not r for r in readers):
            readers.append(code)
    if not readers:
        raise RuntimeError("%s has no triton.compiler.compiler.compile" % _version())

    def ours(*, src, metadata, metadata_group, times, cache_hit, **kw):
        _compiled(src, metadata, times, cache_hit)

    setattr(cls, "listener", _Listener(default, tuple(readers), ours))
    _watch_autotuner()
    hook = getattr(getattr(knobs, "runtime", None), "kernel_load_end_hook", None)
    if hook is not None and hasattr(hook, "add"):
        def on_load(*args, **kw):
            try:
                _loaded(*args, **kw)
            except Exception:
                pass
        hook.add(on_load)
    else:
        _record.note("triton-load-hook", "%s has no kernel_load_end_hook (3.5+): Triton kernels are tied to their "
                     "modules by the cubin ptxas wrote" % _version())


_autotune = {"code": None, "watching": False}


def _watch_autotuner():
    """``@triton.autotune``: each config's benchmark (``Autotuner._bench``: its launches and
    ``do_bench``'s cache flushes between them) is a span of role autotune, so the report counts
    those launches as compile work. Watched through _watch (sys.monitoring events local to that one
    function's code, Python 3.12+), from the first compile seen inside a benchmark on (a program
    that never autotunes keeps every tool id): Triton's classes are untouched."""
    mod = sys.modules.get("triton.runtime.autotuner")
    bench = getattr(getattr(mod, "Autotuner", None), "_bench", None)
    code = getattr(_watch.unwrapped(bench), "__code__", None) if bench is not None else None
    if code is None or code.co_name != "_bench":
        _record.note("triton-autotune", "%s has no Autotuner._bench: its autotuning's launches are counted as "
                     "the program's" % _version())
        return
    _autotune["code"] = code


def _benchmark_frame():
    """The frame of the autotuner's benchmark this compile runs in, or None."""
    code, f = _autotune["code"], sys._getframe(2)
    for _ in range(64):
        if f is None or f.f_code is code:
            return f
        f = f.f_back
    return None


def _benchmarked(t0, t1, frame):
    fn = getattr(frame.f_locals.get("self"), "base_fn", None) if frame is not None else None
    _record.write("span", role="autotune", fw="triton", name=str(getattr(fn, "__name__", "") or "triton autotune"),
                  t0=t0, t1=t1)


def _inside_benchmark(t0):
    """A compile inside Autotuner._bench (a config's first run): watch every benchmark from now on;
    this one began no later than its compile."""
    code = _autotune["code"]
    if code is None or _autotune["watching"] or _benchmark_frame() is None:
        return
    _autotune["watching"] = True
    why = _watch.watch(code, _benchmarked, began=t0)
    if why is not None:
        _record.note("triton-autotune", why + ": Triton's autotuning launches are counted as the program's")
