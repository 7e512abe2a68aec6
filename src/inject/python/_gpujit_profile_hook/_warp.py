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

    def name_of(params):
        return "%s on %s" % (getattr(params.get("self"), "name", "module"), params.get("device"))

    # compiled, or Warp's kernel cache served it
    _outer.on_return(cls, "_compile", lambda params, compiled: _outer.note(cache="miss" if compiled else "hit"))
    _outer.watch(cls, "load", "load", name_of, only_noted=True)  # a module loaded already compiles nothing
