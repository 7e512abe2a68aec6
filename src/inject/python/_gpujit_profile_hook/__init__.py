"""Framework adapters of ``gpujit profile`` (standard library only, Python 3.9+).

``start()`` writes this process's proc record and puts a finder first on ``sys.meta_path``. The
finder lets each watched module (``jax``, ``triton``, ``torch._dynamo``, Numba-CUDA's compiler and
dispatcher, Warp's context, gstaichi's kernels) import as usual and then calls its adapter, which
registers with the framework's own hooks (chaining any hook already there). Each event is one JSON
line appended to this process's records file at once (docs/record-format.md), so a worker that
leaves by ``os._exit`` loses nothing. An adapter that meets an API it does not know writes a note
once and records nothing.

The program must not see any of it. Its modules keep their own loaders (ours stands in only
between the import system finding the module and the module's first line, and
``importlib.util.find_spec`` never sees it). A program that replaces ``sys.meta_path`` or puts
its own finder first still has its frameworks adapted: an audit hook (which a program cannot
remove) adapts them at the first audited event (an import, an open ...) after theirs is done, and
says so; one imported and never adapted is said at exit. No exception of ours reaches the
program, whatever its class (a framework's module ``__getattr__`` may raise anything while an
adapter looks); but a ``KeyboardInterrupt`` is the user's Ctrl-C arriving while an adapter ran,
and goes on to the program's import as it would have without gpujit."""
import atexit
import sys
import threading

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
    "torch.profiler.profiler": ("_torch_profiler", "install_torch"),
}

_adapted = set()  # watched modules whose adapter ran (or was tried) in this process
_lock = _record.ChildLock()
_local = threading.local()  # per thread: names being found, and whether the audit hook is running
_started = False
_audit_on = False
_leaving = {}  # name -> our start-up module, removed from sys.modules once site's import of it ends
_pending = set()  # watched modules being imported: adapted at the first event after, if the finder did not


def _run_adapter(name, module):
    adapter, fn = WATCHED[name]
    try:
        mod = __import__(__name__ + "." + adapter, fromlist=[fn])
        getattr(mod, fn)(module)
    except BaseException as e:  # an API this adapter does not know (or a module __getattr__ that raised)
        _record.note("adapter-" + adapter.strip("_"),
                     "the %s adapter could not register (%s: %s): its compiles are not in this report"
                     % (adapter.strip("_"), type(e).__name__, e))
        if isinstance(e, KeyboardInterrupt):  # the user's Ctrl-C, not ours
            raise


def _adapt(name, module, late=False):
    with _lock:
        if name in _adapted:
            return
        _adapted.add(name)
    if late:
        _record.note("late-" + name,
                     "%s was imported past gpujit's import hook (the program's own finder or sys.meta_path): its "
                     "adapter registered once that import was done (at the next import or file opened), and its "
                     "compiles before that are not in this report" % name)
    _run_adapter(name, module)


def _loaded(name):
    """The module, where it is in sys.modules and done importing."""
    module = sys.modules.get(name)
    if module is None:
        return None
    try:
        spec = vars(module).get("__spec__")  # no module __getattr__ runs
    except TypeError:  # not a module: something the program put there
        return module
    return None if getattr(spec, "_initializing", False) else module


class _Loader:
    """Stands in for the module's loader until the module runs: gives the module (and its spec)
    its own loader back before its first line, then calls the adapter when it has run."""

    def __init__(self, name, spec):
        self._name, self._spec, self._loader = name, spec, spec.loader

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        self._spec.loader = self._loader
        if vars(module).get("__loader__") is self:
            module.__loader__ = self._loader
        self._loader.exec_module(module)
        _adapt(self._name, module)

    def __getattr__(self, attr):  # is_package, get_code, get_resource_reader ...
        return getattr(self._loader, attr)


def _finding():
    names = getattr(_local, "finding", None)
    if names is None:
        names = _local.finding = set()
    return names


class _Finder:
    """Finds nothing itself: asks the finders after it, and stands in for a watched module's
    loader when the import system is loading it (not for importlib.util.find_spec)."""

    def find_spec(self, name, path=None, target=None):
        if name not in WATCHED or name in _adapted:
            return None
        try:  # the import system's own call: _find_and_load_unlocked -> _find_spec -> here (3.9-3.13)
            if sys._getframe(2).f_code.co_name != "_find_and_load_unlocked":
                return None
        except ValueError:
            return None
        finding = _finding()
        if name in finding:
            return None
        finding.add(name)
        try:
            for finder in list(sys.meta_path):
                if finder is self:
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:  # a finder only the import system knows how to ask: it asks, in order
                    return None
                spec = find(name, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _Loader(name, spec)
                    return spec
            return None
        except KeyboardInterrupt:
            raise
        except BaseException:  # the import system asks them again, and the program sees what they do
            return None
        finally:
            finding.discard(name)

    def invalidate_caches(self):
        pass


def _audit(event, args):
    """On every audited event of the process: cheap unless there is something to do, and never
    raises into the operation audited (an open, an import ...)."""
    if event != "import" and not _leaving and not _pending:
        return
    try:
        if getattr(_local, "auditing", False):
            return
        _local.auditing = True
        try:
            _audited(event, args)
        finally:
            _local.auditing = False
    except KeyboardInterrupt:
        raise
    except BaseException:
        pass


def _audited(event, args):
    for name, ours in list(_leaving.items()):
        if getattr(getattr(ours, "__spec__", None), "_initializing", False):
            continue  # site is still importing it
        if sys.modules.get(name) is ours:
            del sys.modules[name]
        _leaving.pop(name, None)
    if not _started:
        return
    if event == "import":  # `import name` begins (importlib.import_module raises no event)
        if args and args[0] in WATCHED and args[0] not in _adapted:
            _pending.add(args[0])
        names = WATCHED
    else:
        names = list(_pending)
    for name in names:
        if name in _adapted:
            _pending.discard(name)
            continue
        module = _loaded(name)
        if module is not None:
            _pending.discard(name)
            _adapt(name, module, late=True)


def _audit_install():
    global _audit_on
    if not _audit_on:
        _audit_on = True
        sys.addaudithook(_audit)


def _at_exit():
    try:
        for name in WATCHED:
            if name not in _adapted and _loaded(name) is not None:
                _record.note("unwatched-" + name,
                             "%s was imported past gpujit's import hook (the program's own import hooks) and its "
                             "adapter never registered: its compiles are not in this report" % name)
        _record.at_exit()
    except BaseException:
        pass


def start(name):
    """From the start-up module `name`: sitecustomize, or usercustomize where the program's own
    sitecustomize came first on PYTHONPATH and shadowed ours."""
    global _started
    if _started or not _record.active():
        return
    _started = True
    _record.begin()
    if name != "sitecustomize":
        _record.note("hook-from-" + name,
                     "the program's own sitecustomize came first on PYTHONPATH: gpujit's hook started from %s, "
                     "after it" % name)
    for watched in WATCHED:  # imported already (by a .pth file, or a sitecustomize before ours): adapt now
        module = _loaded(watched)
        if module is not None:
            _adapt(watched, module)
    sys.meta_path.insert(0, _Finder())
    _audit_install()
    atexit.register(_at_exit)


def start_inproc(directory, inject):
    """An in-process session (gpujit.profile in a program `gpujit profile` did not start): the
    adapters write to `directory` while it lasts; frameworks imported already are adapted now, the
    others when they are imported. Started once per process; a later session only changes where
    records go."""
    global _started
    _record.use(directory, inject)
    _record.begin()
    if _started:
        return
    _started = True
    for watched in WATCHED:
        module = _loaded(watched)
        if module is not None:
            _adapt(watched, module)
    sys.meta_path.insert(0, _Finder())
    _audit_install()


def stop_inproc():
    """The session ends: the adapters stay registered (the frameworks hold them) and write nothing."""
    _record.use("")


def leave(name, ours):
    """The program has no `name` module of its own (or its own failed): once site's import of
    ours is done, take ours out of sys.modules, so `import name` fails as it would without us."""
    _leaving[name] = ours
    _audit_install()
