"""``gpujit.profile``: the compile-against-execute report of a region of Python code."""
from __future__ import annotations

import os
import sys
import time
from typing import List, Optional, Union

from . import _args, _gpujit
from . import _steps as _steps_mod
from ._errors import _BY_CODE
from .timing import synchronize as _synchronize


def _count(what: str, v) -> int:
    """A whole number of rows, 0 or more (not a bool, not a float, not a str)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("%s must be an int, not %s" % (what, type(v).__name__))
    if v < 0:
        raise ValueError("%s must be >= 0, not %d" % (what, v))
    return v


def _same(a: str, b: str) -> bool:
    """One file under two names: the same inode where both exist, else the same normalised path."""
    try:
        sa, sb = os.stat(a), os.stat(b)
        return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _not_the_input(src: str, out: dict) -> None:
    """Refused before anything is read (InvalidArgumentError, a ValueError): an output over the
    saved profile it reads, or two outputs in one file (the one written last would be all that is left)."""
    named = [(k, v) for k, v in out.items() if v is not None]
    for i, (k, v) in enumerate(named):
        if _same(v, src):
            raise _BY_CODE[-1](-1, "GPUJIT_EINVAL", "%s=%r is the profile being read: writing it would replace it; "
                               "name another file" % (k, v))
        for k2, v2 in named[:i]:
            if _same(v, v2):
                raise _BY_CODE[-1](-1, "GPUJIT_EINVAL", "%s and %s name one file (%r): each output needs its own"
                                   % (k2, k, v))


class _Report(str):
    """The report's text; ``p.report`` and ``p.report()`` (as torch.profiler users write it) alike."""

    def __call__(self) -> str:
        return str(self)


def _hook_dir(inject: str) -> str:
    """The framework adapters' directory beside the injection library (as `gpujit profile` finds it)."""
    return os.path.join(os.path.dirname(inject), "gpujit-python-hook")


def _start_adapters(directory: str, inject: str):
    """The framework adapters of `gpujit profile`'s start-up hook, started in this process: the
    frameworks imported already now, the others as they are imported. Returns the hook's package,
    or a note saying why the frameworks' compiles are not seen."""
    where = _hook_dir(inject)
    if not os.path.isfile(os.path.join(where, "_gpujit_profile_hook", "__init__.py")):
        return None, ("%s: the framework adapters are not beside the injection library: the compiles of JAX, "
                      "Triton, torch.compile, Numba, Warp and Taichi are not seen as theirs" % where)
    if sys.version_info < (3, 9):
        return None, "Python %d.%d: the framework adapters need 3.9+" % sys.version_info[:2]
    hook = sys.modules.get("_gpujit_profile_hook")
    if hook is None:
        sys.path.insert(0, where)
        try:
            import _gpujit_profile_hook as hook  # standard library only; nothing of it reaches the program
        finally:
            if where in sys.path:
                sys.path.remove(where)
    hook.start_inproc(directory, inject)
    return hook, None


def _torch_profiler_recording() -> bool:
    """Whether the program's torch.profiler (its autograd profiler, Kineto) is recording now."""
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch._C._autograd._profiler_enabled())
    except Exception:  # another torch: its profiler, if any, takes CUPTI through calls gpujit rebinds
        return False


_NVRTC_FUNCTIONS = ("nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcDestroyProgram")


def _loaded_nvrtc() -> List[str]:
    """The copies of NVRTC this process has loaded (its builtins library aside)."""
    paths = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                fields = line.split(None, 5)  # address perms offset dev inode [path]
                base = os.path.basename(fields[5].strip()) if len(fields) == 6 else ""
                if base.startswith("libnvrtc") and ".so" in base and "builtins" not in base:
                    paths.add(fields[5].strip())
    except OSError:
        pass
    return sorted(paths)


def _ctypes_reals() -> dict:
    """Before the block: the real address of each NVRTC function of each loaded copy, for the ctypes
    function objects the program made earlier (their pointers live on the heap, where the injection
    library's rebinding does not look)."""
    ctypes = sys.modules.get("ctypes")
    reals = {}
    if ctypes is None:
        return reals
    for path in _loaded_nvrtc():
        try:
            lib = ctypes.CDLL(path)
            for name in _NVRTC_FUNCTIONS:
                reals[ctypes.cast(lib[name], ctypes.c_void_p).value] = (path, name)
        except (OSError, AttributeError):
            continue
    return reals


def _ctypes_rebind(reals: dict) -> list:
    """In the block: each ctypes function object holding one of `reals` now calls its wrapper (the
    injection library's, which a look-up through ctypes gives now); returns what to put back."""
    import ctypes
    import gc

    wrappers, done = {}, []
    for real, (path, name) in reals.items():
        try:
            w = ctypes.cast(ctypes.CDLL(path)[name], ctypes.c_void_p).value
        except (OSError, AttributeError):
            continue
        if w and w != real:
            wrappers[real] = w
    if not wrappers:
        return done
    # every class of ctypes function objects, to test each object's type against: isinstance() goes
    # through their metaclass, three times slower over the hundreds of thousands of objects a
    # PyTorch process holds
    kinds, todo = set(), [ctypes._CFuncPtr]
    while todo:
        k = todo.pop()
        if k not in kinds:
            kinds.add(k)
            todo.extend(k.__subclasses__())
    for obj in [o for o in gc.get_objects() if type(o) in kinds]:
        slot = ctypes.c_void_p.from_address(ctypes.addressof(obj))
        w = wrappers.get(slot.value)
        if w is not None:
            done.append((obj, slot.value, w))
            slot.value = w
    return done


def _ctypes_put_back(done: list) -> None:
    import ctypes

    for obj, real, w in done:
        slot = ctypes.c_void_p.from_address(ctypes.addressof(obj))
        if slot.value == w:
            slot.value = real


class profile:
    """The JIT work done inside a ``with`` block, against the GPU work it bought::

        with gpujit.profile(schedule=gpujit.schedule(wait=80, warmup=3, active=1)) as p:
            for i in range(n):
                train_step()
                p.step()                      # or gpujit.step(), or torch.profiler's step()
        p.export_chrome_trace("trace.json")  # Perfetto / chrome://tracing
        print(p.report())                     # the table; p.steps, p.modules, p.totals, p.data

    Every NVRTC compile (CuPy's, PyTorch's jiterator, cuda.core's, gpujit's), nvJitLink link and
    module load that began inside the block, the driver's JIT, and each kernel, copy and memset that
    started on a GPU inside it, tied to the module it came from — the rows and totals of ``gpujit
    profile``, for this process and this block — and, with a ``schedule``, the active steps explained
    (wall time, GPU busy time, gaps, a verdict: docs/profile.md "Steps").

    In a plain ``python app.py`` the profile attaches in-process: the injection library is loaded
    into this process, the calls its libraries make to NVRTC, nvJitLink, libNVVM and the driver's
    module loads are rebound to gpujit's wrappers, CUPTI is attached (from the schedule's first
    warmup step to the step after its last active one), and the framework adapters (JAX, Triton,
    torch.compile, Numba, Warp, Taichi) are started. What it cannot see in-process is named in
    ``p.notes``: child processes, compiles through NVRTC functions resolved before the block and
    kept on the heap (a ctypes function object made before the block is rebound too), the GPU where
    there is no driver or no CUPTI. A program that runs its own
    torch.profiler or CUPTI subscriber keeps it: gpujit steps aside and says so. Under ``gpujit
    profile`` (``python -m gpujit profile -- python app.py``) the block reads what that records,
    and the schedule is that command's ``--schedule``.

    ``schedule``: a ``gpujit.schedule(...)`` (or its "wait=W,warmup=U,active=A,..." text): which
    steps are recorded. ``steps``: where steps come from — "auto" (``p.step()``, ``gpujit.step()``
    or torch.profiler's ``step()``), "api", "torch", "nvtx:NAME", "kernel:NAME" (in-process, NVTX
    calls from libraries whose first NVTX call comes inside the block). ``print``: the
    table on ``file`` (default stderr) at exit (default: yes under ``gpujit profile``, no
    in-process, where the program prints ``p.report()``). ``json``/``trace``: write the report's
    JSON / Trace Event Format file there at exit. ``top``: module rows in the table (0: all).
    ``synchronize``: wait for the GPU at exit so the block's kernels are in (default True).
    ``max_events``: kernels, copies and memsets kept one by one per process (default 200000): those
    past it are not in a block's report. ``frameworks``: start the framework adapters in-process
    (default True)."""

    def __init__(self, title: Optional[str] = None, *, schedule=None, steps: Optional[str] = None,
                 print: Optional[bool] = None, file=None, json: Optional[Union[str, os.PathLike]] = None,
                 trace: Optional[Union[str, os.PathLike]] = None, top: int = 20, synchronize: bool = True,
                 max_events: int = 200000, frameworks: bool = True):
        self.title, self.file = _args.string("title", title), file
        self.print = None if print is None else _args.flag("print", print)
        self.synchronize = _args.flag("synchronize", synchronize)
        self.frameworks = _args.flag("frameworks", frameworks)
        self.top = _count("top", top)
        self.max_events = _count("max_events", max_events)
        self.json_path = _args.path("json", json)
        self.trace_path = _args.path("trace", trace)
        if schedule is not None and not isinstance(schedule, (str, _steps_mod.schedule)):
            raise TypeError("schedule must be a gpujit.schedule (or its text), not %s" % type(schedule).__name__)
        self.schedule = None if schedule is None else str(schedule)
        self.steps_from = _args.string("steps", steps)
        self.report = _Report("")
        self.data: dict = {}
        self.inprocess = False
        self._dir: Optional[str] = None
        self._session = self._profile = self._hook = None
        self._ctypes: list = []
        self._notes: List[str] = []

    def __enter__(self) -> "profile":
        self._dir = _gpujit.profile_recording()
        if self._dir is not None:
            if self.schedule is not None or self.steps_from is not None:
                raise _BY_CODE[-15](-15, "GPUJIT_EUNSUPPORTED",
                                    "this process runs under `gpujit profile`, whose --schedule and --step decide the "
                                    "steps of the whole run: give them there, not to gpujit.profile()")
        else:
            reals = _ctypes_reals()
            theirs = _torch_profiler_recording()  # CUPTI is the program's: gpujit steps aside, as under `gpujit profile`
            self._session, self._dir, inject = _gpujit.profile_start(
                self.steps_from, self.schedule, self.max_events, False, False, theirs, None)
            if theirs:
                self._notes.append("torch.profiler was recording when the block began: gpujit stepped aside and left "
                                   "CUPTI to it")
            self.inprocess = True
            self._ctypes = _ctypes_rebind(reals) if reals else []
            if self.frameworks:
                try:
                    self._hook, why = _start_adapters(self._dir, inject)
                except Exception as e:  # the program runs on; the report says what it lacks
                    self._hook, why = None, "the framework adapters could not start (%s: %s)" % (type(e).__name__, e)
                if why:
                    self._notes.append(why)
            else:
                self._notes.append("frameworks=False: the compiles of JAX, Triton, torch.compile, Numba, Warp and "
                                   "Taichi are not seen as theirs")
        self._t0 = time.time_ns()
        return self

    def step(self) -> None:
        """The step the program was in ends, the next begins (``gpujit.step()``)."""
        _gpujit.step()

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.synchronize:
            try:
                _synchronize()
            except (_BY_CODE[-11], _BY_CODE[-12]):  # no driver, no device: no GPU work to wait for
                pass
        self._t1 = t1 = time.time_ns()
        title = self.title or "%s (pid %d), a block of %.1f ms" % (
            os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python", os.getpid(), (t1 - self._t0) / 1e6)
        if self._session is None:
            text, self.data = _gpujit.profile_range(self._dir, os.getpid(), self._t0, t1, title, self.top,
                                                    self.trace_path, self.json_path)
        else:
            _ctypes_put_back(self._ctypes)
            self._ctypes = []
            if self._hook is not None:
                self._hook.stop_inproc()
            text, self.data, self._profile = _gpujit.profile_stop(self._session, title, self.top)
            self._session = None
            if self._notes:
                self.data.setdefault("notes", []).extend(self._notes)
                text += "".join("\n  note: %s" % n for n in self._notes)
            if self.trace_path:
                _gpujit.profile_write(self._profile, "trace", self.trace_path)
            if self.json_path:
                _gpujit.profile_write(self._profile, "json", self.json_path)
        self.report = _Report(text)
        if self.print if self.print is not None else not self.inprocess:
            print(self.report, file=self.file or sys.stderr)

    def export_chrome_trace(self, path: Union[str, os.PathLike]) -> None:
        """The block's Trace Event Format file (Perfetto, chrome://tracing), as torch.profiler's of
        the same name: a track per stream with kernel slices, step slices, each launch's host side
        on its thread with a flow to its kernel, and the compiles and loads."""
        out = _args.path("path", path)
        if out is None:
            raise TypeError("path must be a path (str or os.PathLike), not None")
        if self._profile is not None:
            _gpujit.profile_write(self._profile, "trace", out)
        elif self._dir is not None and self.data:
            _gpujit.profile_range(self._dir, os.getpid(), self._t0, self._t1, "", 0, out, None)
        else:
            raise _BY_CODE[-1](-1, "GPUJIT_EINVAL", "export_chrome_trace: the profile has not ended yet (after the "
                               "with block)")

    def save(self, path: Union[str, os.PathLike]) -> None:
        """The block's profile as one saved file (``gpujit profile report FILE`` reads it), in-process."""
        out = _args.path("path", path)
        if self._profile is None:
            raise _BY_CODE[-15](-15, "GPUJIT_EUNSUPPORTED", "save: only an in-process profile that has ended "
                                "(under `gpujit profile`, its -o saves the run)")
        _gpujit.profile_write(self._profile, "save", out)

    @classmethod
    def load(cls, path: Union[str, os.PathLike], *, top: int = 20, json: Optional[Union[str, os.PathLike]] = None,
             trace: Optional[Union[str, os.PathLike]] = None, html: Optional[Union[str, os.PathLike]] = None,
             save: Optional[Union[str, os.PathLike]] = None) -> "profile":
        """A saved profile (``gpujit profile -o run.gjprof -- ...``) or a records directory
        (``--keep DIR``), as ``gpujit profile report`` reads it — nothing is run::

            p = gpujit.profile.load("run.gjprof", html="run.html")
            p.modules, p.totals, p.devices, p.notes; print(p)

        ``json``/``trace``/``html``: also write the report's JSON, its Trace Event Format file, its
        self-contained HTML page there; ``save``: the profile again as one saved file. Raises
        ``NotFoundError`` (nothing at ``path``), ``CorruptError`` (not a saved profile, cut short or
        damaged: the message says where), ``VersionError`` (a format this gpujit does not read),
        ``GpujitIOError`` (an ``OSError``) for what cannot be read or written."""
        src = _args.path("path", path)
        if src is None:
            raise TypeError("path must be a path (str or os.PathLike), not None")
        p = cls(print=False, top=top, json=json, trace=trace)
        out = {"trace": p.trace_path, "json": p.json_path, "html": _args.path("html", html),
               "save": _args.path("save", save)}
        _not_the_input(src, out)
        text, p.data = _gpujit.profile_open(src, p.top, *out.values())
        p.report = _Report(text)
        p.title = p.report.splitlines()[0] if p.report else src
        return p

    @property
    def notes(self) -> List[str]:
        """What the report could not see, or had to say (one line each), as `gpujit profile` prints them."""
        return self.data.get("notes", [])

    @property
    def modules(self) -> List[dict]:
        """Module rows (origin, compiles, repeats, compile_ms, load_ms, jit_ms, kernels, launches,
        gpu_ms, break_even, ...), costliest first."""
        return self.data.get("modules", [])

    @property
    def totals(self) -> dict:
        """Totals of the block: compiles, compile_ms, loads, load_ms, jit_ms, launches, gpu_ms, wall_ms..."""
        return self.data.get("totals", {})

    @property
    def devices(self) -> List[dict]:
        """Per GPU: launches, kernel_ms, copies, copy_ms, memsets, memset_ms."""
        return self.data.get("devices", [])

    @property
    def steps(self) -> List[dict]:
        """The active steps (``gpujit profile --schedule``; docs/profile.md "Steps"), in process and
        step order: pid, step, cycle, src, schedule, complete, wall_ms, window_ms, launches, kernels,
        busy_ms, busy_pct, gaps, gap_median_us, gap_p90_us, gap_max_us, host_wait_ms, host_wait_pct,
        verdict, summary ... — each with ``by_device``, ``by_stream`` and ``top_kernels``: the JSON's
        step_devices, step_streams and step_kernels rows whose "step" is its "id"."""
        out = []
        for s in self.data.get("steps", []):
            s = dict(s)
            for key, table in (("by_device", "step_devices"), ("by_stream", "step_streams"),
                               ("top_kernels", "step_kernels")):
                s[key] = [r for r in self.data.get(table, []) if r["step"] == s["id"]]
            out.append(s)
        return out

    @property
    def kernel_regions(self) -> List[dict]:
        """Kernel regions (gpujit/regions.cuh) read in the program's modules, a row per module and
        region: pid, module, kernels, scope, region, depth, calls, cycles_mean/median/p99/max,
        ns_mean/median/p99/max, sm_imbalance, unit_imbalance, and the module's reads, events,
        dropped, unmatched (docs/profile.md "Kernel regions")."""
        return self.data.get("kernel_regions", [])

    def __str__(self) -> str:
        return self.report
