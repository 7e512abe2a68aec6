"""Framework adapters of ``gpujit profile`` (standard library only).

``install()`` puts a finder on ``sys.meta_path`` that lets each watched module (``jax``,
``triton``, ``torch._dynamo``, Numba-CUDA's compiler and dispatcher, Warp's context, gstaichi's kernels) import as usual and then calls its adapter, which registers with
the framework's own hooks (chaining any hook already there). Each event is one JSON line appended
to this process's records file at once (docs/record-format.md), so a worker that leaves by
``os._exit`` loses nothing. An adapter that meets an API it does not know writes a note once and
records nothing; no exception from here reaches the program."""
import sys

from . import _record

# module -> (adapter module, function): the adapter runs right after the module is imported
WATCHED = {
    "jax": ("_xla", "install"),
    "triton": ("_triton", "install"),
    "torch._dynamo": ("_inductor", "install"),
    "torch._inductor.runtime.triton_heuristics": ("_inductor", "install_autotune"),
    "numba.cuda.compiler": ("_numba", "install_compiler"),
    "numba.cuda.dispatcher": ("_numba", "install_dispatcher"),
    "warp._src.context": ("_warp", "install"),
    "gstaichi.lang.kernel": ("_taichi", "install"),
    "taichi.lang.kernel": ("_taichi", "install"),
}


def _run_adapter(name, module):
    adapter, fn = WATCHED[name]
    try:
        mod = __import__(__name__ + "." + adapter, fromlist=[fn])
        getattr(mod, fn)(module)
    except Exception as e:  # an API this adapter does not know: said once, nothing recorded
        _record.note("adapter-" + adapter.strip("_"),
                     "the %s adapter could not register (%s: %s): its compiles are not in this report"
                     % (adapter.strip("_"), type(e).__name__, e))


class _Loader:
    """The module's own loader, then the adapter."""

    def __init__(self, name, loader):
        self._name, self._loader = name, loader

    def create_module(self, spec):
        return self._loader.create_module(spec) if hasattr(self._loader, "create_module") else None

    def exec_module(self, module):
        self._loader.exec_module(module)
        _run_adapter(self._name, module)

    def __getattr__(self, attr):  # is_package, get_code, get_source, get_resource_reader ...
        return getattr(self._loader, attr)


class _Finder:
    """Finds nothing itself: asks the finders after it, and wraps a watched module's loader."""

    _busy = set()

    def find_spec(self, name, path=None, target=None):
        if name not in WATCHED or name in self._busy:
            return None
        self._busy.add(name)
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _Loader(name, spec.loader)
                    return spec
            return None
        except Exception:
            return None
        finally:
            self._busy.discard(name)

    def invalidate_caches(self):
        pass


def install():
    if not _record.active():
        return
    for name in WATCHED:  # imported already (by another sitecustomize, a .pth file): adapt now
        if name in sys.modules:
            _run_adapter(name, sys.modules[name])
    sys.meta_path.insert(0, _Finder())
