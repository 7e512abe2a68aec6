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


def _func_name(params):
    """compile_cuda(pyfunc, return_type, args, ...), compile(pyfunc, sig, ...), compile_ptx(...)."""
    f = params.get("pyfunc")
    sig = params["args"] if "return_type" in params else params.get("sig", "")
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or "function"
    return name + _signature(sig)


def install_compiler(compiler):
    watched = [_outer.watch(compiler, attr, stage, _func_name) for attr, stage in (
        ("compile_cuda", "typing_lowering"), ("compile", "compile"), ("compile_ptx", "compile_ptx"))]
    if not any(watched):
        raise RuntimeError("%s has no compile_cuda/compile/compile_ptx" % _version())


def install_dispatcher(dispatcher):
    cls = getattr(dispatcher, "CUDADispatcher", None)
    if cls is None or not hasattr(cls, "compile"):
        raise RuntimeError("%s has no CUDADispatcher.compile" % _version())

    def name_of(params):
        f = getattr(params.get("self"), "py_func", None)
        return getattr(f, "__qualname__", "kernel") + _signature(params.get("sig", ""))

    _outer.watch(cls, "compile", "dispatch", name_of)
    cache_cls = getattr(dispatcher, "CUDACache", None)
    if cache_cls is not None:  # a disk-cache hit: the kernel loaded, nothing compiled
        _outer.on_return(cache_cls, "load_overload",
                         lambda params, kernel: kernel is not None and _outer.note(cache="hit"))
