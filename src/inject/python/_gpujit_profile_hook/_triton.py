"""Triton (alone, and under Inductor): per compiled specialization, its stages as Triton timed
them (``knobs.compilation.listener``: IR initialization, each lowering stage — ttir, ttgir, llir,
ptx, cubin (ptxas) — and storing the results) and whether Triton's cache served it; per module
loaded (``knobs.runtime.kernel_load_end_hook``, Triton 3.5+), the handle the compile's hash was
loaded as, which ties the specialization to its module (kernel names repeat across them)."""
import sys

from . import _record


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


def _chain(comp, ours):
    """The listener slot holds one function: ours stays in it and calls the program's — the one
    that was there, and any the program sets later (its class gets a property for the slot)."""
    held = {"program": getattr(comp, "listener", None), "busy": False}

    def listener(**kw):
        if held["busy"]:  # the program's listener calling the one it read back (ours)
            return
        held["busy"] = True
        try:
            try:
                ours(**kw)
            except Exception:
                pass
            if held["program"] is not None:
                held["program"](**kw)
        finally:
            held["busy"] = False

    base = type(comp)

    def get(self):
        return listener

    def put(self, f):
        held["program"] = None if f is listener else f

    try:
        comp.__class__ = type(base.__name__, (base,), {"listener": property(get, put), "__module__": base.__module__})
    except TypeError:  # a class that cannot be extended: the slot is ours until the program sets its own
        comp.listener = listener


def install(triton):
    knobs = getattr(triton, "knobs", None)
    comp = getattr(knobs, "compilation", None)
    if comp is None or not hasattr(comp, "listener"):
        raise RuntimeError("%s has no triton.knobs.compilation.listener" % _version())

    def ours(*, src, metadata, metadata_group, times, cache_hit, **kw):
        _compiled(src, metadata, times, cache_hit)

    _chain(comp, ours)
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
