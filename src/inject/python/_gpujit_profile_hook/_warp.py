"""NVIDIA Warp: per module and device, its load — code generation and Warp's own compile
(NVRTC, linked into warp.so where gpujit cannot see it; clang for the CPU) or a kernel-cache
load — timed around ``Module.load`` as Warp's own "Module ... load on device ... took N ms"
is; the module the driver loads inside it is tied to it (same thread), and with it the
``<name>_<hash>_cuda_kernel_*`` kernels launched from it."""
import sys

from ._outer import Outer


def _version():
    return "warp " + str(getattr(sys.modules.get("warp"), "__version__", "?"))


_outer = Outer("warp", _version)


def install(context):
    cls = getattr(context, "Module", None)
    if cls is None or not hasattr(cls, "load") or not hasattr(cls, "_compile"):
        raise RuntimeError("%s has no Module.load/_compile" % _version())

    def name_of(args, kw):
        self = args[0]
        device = args[1] if len(args) > 1 else kw.get("device")
        return "%s on %s" % (getattr(self, "name", "module"), device)

    compile_ = cls._compile

    def _compile(self, *a, **k):
        compiled = compile_(self, *a, **k)
        _outer.note(cache="miss" if compiled else "hit")  # compiled, or Warp's kernel cache served it
        return compiled

    _compile.__wrapped__ = compile_
    cls._compile = _compile
    _outer.wrap(cls, "load", "load", name_of, only_noted=True)  # a module loaded already compiles nothing
