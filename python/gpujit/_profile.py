"""``gpujit.profile``: the compile-against-execute report of a region of Python code."""
from __future__ import annotations

import os
import sys
import time
from typing import List, Optional, Union

from . import _args, _gpujit
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


class profile:
    """The JIT work done inside a ``with`` block, against the GPU work it bought::

        with gpujit.profile() as p:      # in a program run as: python -m gpujit profile -q -- python app.py
            step()
        p.modules, p.totals, p.devices   # as `gpujit profile --json` has them; print(p) for the table

    Every NVRTC compile (CuPy's, PyTorch's jiterator, cuda.core's, gpujit's), nvJitLink link and
    module load that began inside the block, the driver's JIT, and each kernel, copy and memset that
    started on a GPU inside it, tied to the module it came from — the rows and totals of ``gpujit
    profile``, for this process and this block. Other frameworks resolve NVRTC when they start, so
    the process must run under ``gpujit profile`` (``python -m gpujit profile -- python app.py``)
    to see their compiles; outside it, entering raises ``UnsupportedError`` saying so.

    ``print``: the table on ``file`` (default stderr) at exit. ``json``/``trace``: write the report's
    JSON / Trace Event Format file there. ``top``: module rows in the table (0: all).
    ``synchronize``: wait for the GPU at exit so the block's kernels are in (default True).
    Kernels, copies and memsets are counted from their per-launch records: those past the
    profile's trace budget (``--max-events``, default 200000 per process) are not in a block's
    report."""

    def __init__(self, title: Optional[str] = None, *, print: bool = True, file=None,
                 json: Optional[Union[str, os.PathLike]] = None, trace: Optional[Union[str, os.PathLike]] = None,
                 top: int = 20, synchronize: bool = True):
        self.title, self.file = _args.string("title", title), file
        self.print, self.synchronize = _args.flag("print", print), _args.flag("synchronize", synchronize)
        self.top = _count("top", top)
        self.json_path = _args.path("json", json)
        self.trace_path = _args.path("trace", trace)
        self.report = ""
        self.data: dict = {}
        self._dir: Optional[str] = None

    def __enter__(self) -> "profile":
        self._dir = _gpujit.profile_recording()
        if self._dir is None:
            cls = _BY_CODE[-15]  # UnsupportedError
            raise cls(-15, "GPUJIT_EUNSUPPORTED",
                      "gpujit.profile reads what `gpujit profile` records, and this process is not run under it: "
                      "python -m gpujit profile -- python %s (-q prints only the blocks' reports)"
                      % (os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "app.py"))
        self._t0 = time.time_ns()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.synchronize:
            try:
                _synchronize()
            except (_BY_CODE[-11], _BY_CODE[-12]):  # no driver, no device: no GPU work to wait for
                pass
        t1 = time.time_ns()
        title = self.title or "%s (pid %d), a block of %.1f ms" % (
            os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python", os.getpid(), (t1 - self._t0) / 1e6)
        self.report, self.data = _gpujit.profile_range(self._dir, os.getpid(), self._t0, t1, title, self.top,
                                                       self.trace_path, self.json_path)
        if self.print:
            print(self.report, file=self.file or sys.stderr)

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
        p.report, p.data = _gpujit.profile_open(src, p.top, *out.values())
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

    def __str__(self) -> str:
        return self.report
