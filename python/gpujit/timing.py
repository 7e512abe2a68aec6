"""Timing GPU work from Python, as Warp's users know it: ``ScopedTimer``, ``timing_begin`` /
``timing_end`` / ``timing_print`` and ``TimingResult`` — over gpujit's C timing layer.

Two timers: ``timer="events"`` (the default, like Warp's) times the work gpujit itself issues —
kernel launches, copies, memsets and graphs — with a CUDA event pair each, on every device gpujit
has opened and the current one. ``timer="cupti"`` captures, through CUPTI's activity records,
everything that runs on any GPU of the process while the region is open, whoever issued it:
CuPy's and PyTorch's kernels, copies and memsets as well as gpujit's.

Every timer reads the kernel regions (``#include <gpujit/regions.cuh>``, modules built with
``regions=True``) of the launches it covers: ``ScopedTimer.regions``, ``timing_end().regions``.
Timers nest: each reads its own launches (an inner timer's are in the outer one's table too)."""
from __future__ import annotations

import builtins
import sys
import time
from typing import Callable, List, Optional, Sequence, Tuple, Union

from . import _args, _gpujit
from . import regions as _regions
from .regions import RegionTable

TIMING_KERNEL = 1
TIMING_MEMCPY = 2
TIMING_MEMSET = 4
TIMING_GRAPH = 8
TIMING_ALL = 0xF

_KINDS = ["kernel", "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memset", "graph"]
_KIND_FILTER = [TIMING_KERNEL, TIMING_MEMCPY, TIMING_MEMCPY, TIMING_MEMCPY, TIMING_MEMSET, TIMING_GRAPH]
_TIMERS = {"events": 0, "cupti": None, "cupti-serial": 1}


class TimingResult:
    """One timed GPU activity: ``device`` (CUDA ordinal), ``name`` (the kernel, or "memcpy HtoD",
    "memset", ...), ``kind``, ``filter`` (its TIMING_* flag), ``elapsed`` (GPU ms), ``start_us``
    (GPU start on gpujit's trace clock), ``bytes`` (copies and memsets), ``graph_node`` and
    ``missing`` (CUPTI gave no record: ``elapsed`` is 0, never a made-up time)."""

    __slots__ = ("device", "name", "kind", "filter", "elapsed", "start_us", "host_us", "launch_us", "bytes",
                 "graph_node", "missing", "_d")

    def __init__(self, d: dict):
        self._d = d  # the C layer's named fields, handed back to timing_format as they came
        self.device, self.name, self.elapsed = d["device"], d["name"], d["elapsed_ms"]
        self.start_us, self.host_us, self.launch_us = d["start_us"], d["host_us"], d["launch_us"]
        self.bytes, self.graph_node, self.missing = d["bytes"], d["graph_node"], d["missing"]
        kind = d["kind"]
        self.kind = _KINDS[kind] if 0 <= kind < len(_KINDS) else "unknown"
        self.filter = _KIND_FILTER[kind] if 0 <= kind < len(_KINDS) else 0

    def __repr__(self) -> str:
        return "TimingResult(device=%d, name=%r, kind=%r, elapsed=%.4f ms)" % (self.device, self.name, self.kind,
                                                                               self.elapsed)


class TimingResults(list):
    """What ``timing_end`` returns: its TimingResult objects (a list), and the kernel regions of the
    launches the region covered: ``regions``, the table of the one module with regions that ran
    (the first where several did; None where none ran), ``region_tables``, all of them (one per
    module and device)."""

    def __init__(self, results=(), region_tables: Optional[list] = None):
        super().__init__(results)
        self.region_tables: List[RegionTable] = list(region_tables or [])

    @property
    def regions(self) -> Optional[RegionTable]:
        return self.region_tables[0] if self.region_tables else None


def _results(rows) -> List[TimingResult]:
    return [TimingResult(d) for d in rows]


def synchronize() -> None:
    """Wait for all work of every device gpujit has opened and of the current device."""
    _gpujit.synchronize()


class _Region:
    """An open timed region: gpujit's devices (events) or a process-wide capture (CUPTI)."""

    @staticmethod
    def check(cuda_filter, timer) -> None:
        """The arguments, before anything waits on the GPU: a TypeError or ValueError naming one."""
        if isinstance(cuda_filter, bool) or not isinstance(cuda_filter, int):
            raise TypeError("cuda_filter must be an int of gpujit.TIMING_* flags, not %s" % type(cuda_filter).__name__)
        if not isinstance(timer, str):
            raise TypeError("timer must be a str ('events', 'cupti' or 'cupti-serial'), not %s" % type(timer).__name__)
        if not cuda_filter & TIMING_ALL:
            raise ValueError("cuda_filter must select something: a combination of gpujit.TIMING_* flags")
        if timer not in _TIMERS:
            raise ValueError("timer must be 'events', 'cupti' or 'cupti-serial', not %r" % (timer,))

    def __init__(self, cuda_filter: int, timer: str):
        self.check(cuda_filter, timer)
        self.lost = 0
        self.region_tables: list = []
        if _TIMERS[timer] is None:  # the capture also reads the regions of the devices gpujit opened
            self._capture, self._devices = _gpujit.capture_begin(cuda_filter)
        else:
            self._capture, self._devices = None, _gpujit.timing_begin(cuda_filter, _TIMERS[timer])

    def end(self) -> List[TimingResult]:
        if self._capture is not None:
            rows, self.lost = _gpujit.capture_end(self._capture)
        else:
            rows = _gpujit.timing_end(self._devices)
        # the kernel regions of its launches: its window's, the last one closed on its devices
        self.region_tables = _regions._timed_tables(self._devices)
        return _results(rows)


class _Window:
    """A timer that records no GPU activity still reads the kernel regions of the launches on the
    devices gpujit has opened, in a window of its own on each (no device is opened for it)."""

    def __init__(self):
        self._devices = _gpujit.regions_window_begin()

    def end(self) -> list:
        _gpujit.regions_window_end(self._devices)
        return _regions._timed_tables(self._devices)


_open: List[Tuple[_Region, bool]] = []


def timing_begin(cuda_filter: int = TIMING_ALL, synchronize: bool = True, timer: str = "events") -> None:
    """Start recording GPU activities (what ``cuda_filter`` selects) until ``timing_end``.
    ``timer``: "events" (gpujit's own work) or "cupti" (every framework's, every device)."""
    synchronize = _args.flag("synchronize", synchronize)
    _Region.check(cuda_filter, timer)
    if synchronize:
        globals()["synchronize"]()
    _open.append((_Region(cuda_filter, timer), synchronize))


def timing_end(synchronize: bool = True) -> TimingResults:
    """Stop the recording ``timing_begin`` started; its activities as TimingResult objects, in a
    list whose ``regions`` and ``region_tables`` hold the kernel regions of its launches."""
    synchronize = _args.flag("synchronize", synchronize)
    if not _open:
        raise RuntimeError("timing_end without timing_begin")
    region, _ = _open.pop()
    if synchronize:
        globals()["synchronize"]()
    rows = region.end()
    return TimingResults(rows, region.region_tables)


_SECTIONS = {"timeline": 1, "activity": 2, "device": 4}


def timing_print(results: Sequence[TimingResult], indent: str = "", sections: Sequence[str] = ("timeline", "activity", "device"),
                 file=None) -> None:
    """Print the CUDA timeline, activity summary and device summary tables of ``results``."""
    mask = 0
    if not isinstance(indent, str):
        raise TypeError("indent must be a str, not %s" % type(indent).__name__)
    if isinstance(sections, str):
        raise TypeError("sections must be a sequence of str such as ('timeline',), not a single str")
    results = list(results) if not isinstance(results, TimingResult) else None
    if results is None or not all(isinstance(r, TimingResult) for r in results):
        raise TypeError("results must be a sequence of TimingResult (what timing_end returns)")
    for s in sections:
        if s not in _SECTIONS:
            raise ValueError("sections are 'timeline', 'activity' and 'device', not %r" % (s,))
        mask |= _SECTIONS[s]
    text = _gpujit.timing_format([r._d for r in results], mask)
    out = file or sys.stdout
    for line in text.splitlines():
        print(indent + line, file=out)


_NAMED_COLORS = {"rapids": 0xFF7400FF, "nvidia": 0xFF76B900, "red": 0xFFFF0000, "green": 0xFF00FF00,
                 "blue": 0xFF0000FF, "yellow": 0xFFFFFF00, "purple": 0xFF800080, "orange": 0xFFFFA500}


def _argb(color) -> int:
    if color is None:
        return 0
    if isinstance(color, str):
        if color not in _NAMED_COLORS:
            raise ValueError("color %r: give an ARGB int, an (r, g, b) tuple or one of %s" % (color, ", ".join(_NAMED_COLORS)))
        return _NAMED_COLORS[color]
    if isinstance(color, int):
        return color & 0xFFFFFFFF
    if isinstance(color, tuple) and len(color) == 3:
        if all(isinstance(c, float) for c in color):
            color = tuple(int(round(max(0.0, min(1.0, c)) * 255)) for c in color)
        r, g, b = (int(c) & 0xFF for c in color)
        return 0xFF000000 | r << 16 | g << 8 | b
    raise TypeError("color must be None, a name, an ARGB int or an (r, g, b) tuple")


class ScopedTimer:
    """Time a block: ``with gpujit.ScopedTimer("step"): ...``.

    ``print``: print "<name> took <ms> ms" at exit (indented by nesting). ``synchronize``: wait
    for the GPU at entry and exit so ``elapsed`` holds the GPU work issued inside. ``nvtx`` (or
    Warp's ``use_nvtx``): an NVTX
    range named ``name`` (``color``: an ARGB int, (r, g, b) or a name) for Nsight Systems.
    ``cuda_filter``: also record each GPU activity (TIMING_KERNEL | TIMING_MEMCPY | ...), by
    ``timer`` ("events": gpujit's own work; "cupti": every framework's, on every device), kept in
    ``timing_results`` and printed as tables, or given to ``report_func(results, indent)``.
    ``dict``: a dict of lists; ``elapsed`` is appended under ``name``. ``active=False`` does nothing.
    After the block: ``elapsed`` (ms), ``timing_results``, ``lost`` (records CUPTI could not keep),
    and the kernel regions its launches recorded (modules built with ``regions=True``), whatever
    the timer: ``regions``, the table of the one such module (None where none ran; the first where
    several did), ``region_tables``, all of them. Their ``share`` needs the kernels' time: a
    ``cuda_filter`` with TIMING_KERNEL gives it (without one it is None). A timer without
    ``cuda_filter`` watches the devices gpujit had opened when it started. Reading the table waits
    for those devices. Timers nest: each has the regions of its own launches."""

    indent = -1  # nesting depth, shared by every timer (Warp's convention)

    def __init__(self, name: str, active: bool = True, print: bool = True, detailed: bool = False,
                 dict: Optional[dict] = None, nvtx: bool = False, color=None, synchronize: bool = False,
                 cuda_filter: int = 0, report_func: Optional[Callable[[List[TimingResult], str], None]] = None,
                 timer: str = "events", use_nvtx: Optional[bool] = None):
        if not isinstance(name, str):
            raise TypeError("name must be a str, not %s" % type(name).__name__)
        active, print, synchronize = _args.flag("active", active), _args.flag("print", print), _args.flag("synchronize", synchronize)
        nvtx = _args.flag("nvtx", nvtx)
        if isinstance(cuda_filter, bool) or not isinstance(cuda_filter, int):
            raise TypeError("cuda_filter must be an int of gpujit.TIMING_* flags, not %s" % type(cuda_filter).__name__)
        if dict is not None and not isinstance(dict, builtins.dict):  # `dict` here is the parameter (Warp's name)
            raise TypeError("dict must be a dict, not %s" % type(dict).__name__)
        if report_func is not None and not callable(report_func):
            raise TypeError("report_func must be callable, not %s" % type(report_func).__name__)
        if detailed:
            raise ValueError("detailed (cProfile) timing is not supported; use gpujit.profile for compile costs")
        self.name, self.active, self.print, self.dict = name, active, print, dict
        self.nvtx = nvtx if use_nvtx is None else bool(use_nvtx)  # use_nvtx: Warp's name for it
        self.color, self.synchronize = _argb(color), synchronize
        self.cuda_filter, self.report_func, self.timer = cuda_filter, report_func, timer
        self.elapsed = 0.0
        self.timing_results: List[TimingResult] = []
        self.lost = 0
        self.region_tables: List[RegionTable] = []
        self._region = self._nvtx = None

    def __enter__(self) -> "ScopedTimer":
        if not self.active:
            return self
        ScopedTimer.indent += 1
        if self.synchronize:
            synchronize()
        if self.nvtx:
            self._nvtx = _gpujit.nvtx_push(self.name, self.color)
        self._region = _Region(self.cuda_filter, self.timer) if self.cuda_filter else _Window()
        self._t0 = time.perf_counter()
        return self

    @property
    def regions(self) -> Optional[RegionTable]:
        """The kernel regions of the launches in the timer's block: the first of ``region_tables``,
        or None (no module with regions ran)."""
        return self.region_tables[0] if self.region_tables else None

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self.active:
            return
        try:
            if self.synchronize and exc_type is None:
                synchronize()
            self.elapsed = (time.perf_counter() - self._t0) * 1e3
            if isinstance(self._region, _Window):
                self.region_tables = self._region.end()
            elif self._region is not None:
                self.timing_results = self._region.end()
                self.lost = self._region.lost
                self.region_tables = self._region.region_tables
            if self._nvtx is not None:
                _gpujit.nvtx_pop(self._nvtx)
        finally:
            ScopedTimer.indent -= 1
        if self.dict is not None:
            self.dict.setdefault(self.name, []).append(self.elapsed)
        pad = "  " * (ScopedTimer.indent + 1)
        if self.print:
            print("%s%s took %.2f ms" % (pad, self.name, self.elapsed))
        if self.timing_results or self.lost:
            if self.report_func is not None:
                self.report_func(self.timing_results, pad + "  ")
            elif self.print:
                timing_print(self.timing_results, pad + "  ")
                if self.lost:
                    print("%s  (%d activity records could not be kept)" % (pad, self.lost))
        if self.print and self.report_func is None:  # the kernel regions' tables, as gpujit run prints them
            for table in self.region_tables:
                for line in str(table).splitlines():
                    print(pad + "  " + line)
