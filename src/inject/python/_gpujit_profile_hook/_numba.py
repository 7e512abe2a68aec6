"""Numba-CUDA: per function and signature, its compile — typing and lowering (the front end),
libNVVM (recorded by the injection library, nested inside), the link — from the compile entry
points (``compile_cuda``, ``compile``, ``compile_ptx``, ``CUDADispatcher.compile``); a kernel a
dispatcher's disk cache served is a cache hit."""
import sys

from ._outer import Outer


def _version():
    for name in ("numba_cuda", "numba"):
        m = sys.modules.get(name)
        if m is not None and getattr(m, "__version__", None):
            return "%s %s" % (name.replace("_", "-"), m.__version__)
    return "numba-cuda ?"


_outer = Outer("numba", _version)


def _signature(sig):
    if isinstance(sig, (tuple, list)):
        return "(%s)" % ", ".join(str(a) for a in sig)
    text = str(sig)
    return text if text.startswith("(") or not text else "(%s)" % text


def _func_name(args, kw):
    f = args[0] if args else kw.get("pyfunc")
    sig = args[2] if len(args) > 2 and not hasattr(args[1], "__iter__") else args[1] if len(args) > 1 else kw.get("sig", kw.get("args", ""))
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or "function"
    return name + _signature(sig)


def install_compiler(compiler):
    wrapped = [_outer.wrap(compiler, attr, stage, _func_name) for attr, stage in (
        ("compile_cuda", "typing_lowering"), ("compile", "compile"), ("compile_ptx", "compile_ptx"))]
    if not any(wrapped):
        raise RuntimeError("%s has no compile_cuda/compile/compile_ptx" % _version())


def install_dispatcher(dispatcher):
    cls = getattr(dispatcher, "CUDADispatcher", None)
    if cls is None or not hasattr(cls, "compile"):
        raise RuntimeError("%s has no CUDADispatcher.compile" % _version())

    def name_of(args, kw):
        self = args[0]
        f = getattr(self, "py_func", None)
        sig = args[1] if len(args) > 1 else kw.get("sig", "")
        return getattr(f, "__qualname__", "kernel") + _signature(sig)

    _outer.wrap(cls, "compile", "dispatch", name_of)
    cache_cls = getattr(dispatcher, "CUDACache", None)
    load = getattr(cache_cls, "load_overload", None)
    if load is not None:  # a disk-cache hit: the kernel loaded, nothing compiled
        def load_overload(self, *a, **k):
            kernel = load(self, *a, **k)
            if kernel is not None:
                _outer.note(cache="hit")
            return kernel
        cache_cls.load_overload = load_overload
