"""Taichi / gstaichi (Genesis): per kernel and specialization, its first call — the front end
(``Kernel.materialize``: Python AST to Taichi IR, or its fast cache), then the back end
(``prog.compile_kernel``: LLVM to PTX or machine code, or the offline cache) and the first launch,
in which the driver JITs the PTX (its module load, on the same thread, is tied to the kernel).
Later calls compile nothing and record nothing."""
import sys

from ._outer import Outer


def _version():
    for name in ("gstaichi", "taichi"):
        m = sys.modules.get(name)
        if m is not None:
            v = getattr(m, "__version__", "?")
            return "%s %s" % (name, ".".join(str(x) for x in v) if isinstance(v, tuple) else v)
    return "taichi ?"


_outer = Outer("taichi", _version)


def install(kernel_module):
    cls = getattr(kernel_module, "Kernel", None)
    for attr in ("__call__", "materialize", "launch_kernel"):
        if cls is None or not hasattr(cls, attr):
            raise RuntimeError("%s has no Kernel.%s" % (_version(), attr))
    def launched(params, result):
        if params.get("compiled_kernel_data", 0) is None:  # compiled (or from the offline cache) in this call
            hit = getattr(getattr(params.get("self"), "fe_ll_cache_observations", None), "cache_hit", False)
            _outer.note(cache="hit" if hit else "miss")

    def name_of(params):
        f = getattr(params.get("self"), "func", None)
        return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or "kernel"

    _outer.on_return(cls, "launch_kernel", launched)
    _outer.watch(cls, "launch_kernel", "back_end_and_first_launch", name_of)
    _outer.watch(cls, "materialize", "front_end", name_of)
    _outer.watch(cls, "__call__", "call", name_of, only_noted=True)
