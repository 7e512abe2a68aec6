"""``gpujit.benchmark``: CPU and per-device GPU times of a Python callable, with the C layer's
statistics and stopping rule, printed in ``cupyx.profiler.benchmark``'s line format."""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Sequence

from . import _args, _gpujit
from . import regions as _regions


def _whole(what: str, v) -> int:
    """An int argument (not a bool, a float or a str): a TypeError naming it otherwise."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("%s must be an int, not %s" % (what, type(v).__name__))
    return v


class BenchmarkResult:
    """What ``benchmark`` measured. ``cpu_times`` (seconds, one per sample) and ``gpu_times``
    (seconds, one list per device), as cupyx's result has them; ``cpu`` and ``gpu[device]``: the
    C layer's statistics in ms (n, min, median, mean, max, stdev, noise); ``devices``; ``stop``
    ("noise", "timeout" or "max_samples"); ``elapsed_s``; ``regions``, the kernel regions the
    samples recorded (a module built with ``regions=True``; the warm-up left out), None where no
    such module ran — ``region_tables`` has one per module and device where several did.
    ``str()`` is cupyx's line."""

    def __init__(self, name: str, d: dict, region_tables: Optional[list] = None):
        self.name = name
        self.stop: str = d["stop"]
        self.elapsed_s: float = d["elapsed_s"]
        self.cpu: Dict[str, float] = d["cpu"]
        self.cpu_times: List[float] = [t / 1e3 for t in d["cpu_times"]]
        self.devices: List[int] = [dev for dev, _, _ in d["devices"]]
        self.gpu: Dict[int, Dict[str, float]] = {dev: stats for dev, stats, _ in d["devices"]}
        self.gpu_times: List[List[float]] = [[t / 1e3 for t in times] for _, _, times in d["devices"]]
        self.region_tables: list = list(region_tables or [])

    @property
    def regions(self):
        """The first of ``region_tables`` (a RegionTable), or None."""
        return self.region_tables[0] if self.region_tables else None

    @staticmethod
    def _item(label: str, t: Sequence[float]) -> str:
        us = [x * 1e6 for x in t]
        mean = sum(us) / len(us)
        s = "    %s:%9.03f us" % (label, mean)
        if len(us) > 1:
            std = math.sqrt(sum((x - mean) ** 2 for x in us) / len(us))  # numpy's std, as cupyx prints
            s += "   +/-%6.03f (min:%9.03f / max:%9.03f) us" % (std, min(us), max(us))
        return s

    def to_str(self, show_gpu: bool = True) -> str:
        """cupyx's line: the name, then CPU and (with ``show_gpu``) each device's mean ± std,
        min and max in µs."""
        items = [self._item("CPU", self.cpu_times)]
        if show_gpu:
            items += [self._item("GPU-%d" % d, t) for d, t in zip(self.devices, self.gpu_times)]
        return "%-20s:%s" % (self.name, " ".join(items))

    def __str__(self) -> str:
        return self.to_str()

    def __repr__(self) -> str:
        return "<gpujit.BenchmarkResult %s>" % self.to_str()


def benchmark(func: Callable, args: tuple = (), kwargs: Optional[dict] = None,
              n_repeat: Optional[int] = None, *, name: Optional[str] = None, n_warmup: int = 10,
              max_duration: Optional[float] = None, devices: Optional[Sequence[int]] = None,
              max_noise: float = 0.005, min_time: float = 0.5, timeout: float = 15.0,
              l2_flush: bool = False) -> BenchmarkResult:
    """Time ``func(*args, **kwargs)``: ``n_warmup`` untimed calls, then samples, each bracketed by a
    CUDA event pair on every device in ``devices`` (default: the current one) on CUDA's legacy
    default stream — where CuPy and PyTorch work unless told otherwise — and by the host clock.

    Called as cupyx's ``benchmark(func, args, kwargs, n_repeat, name=, n_warmup=, max_duration=,
    devices=)`` is, code written for it runs unchanged. ``n_repeat``: that many samples (as cupyx
    does), fewer when ``max_duration`` seconds have passed first. Without it, sampling stops once the
    GPU times' noise (1.4826·MAD/median) falls under ``max_noise`` after at least 10 samples and
    ``min_time`` seconds, or at ``timeout``. ``l2_flush``: overwrite the L2 cache before each
    sample (cold timings; the flush is not timed). An exception in ``func`` propagates."""
    fn = func
    if not callable(fn):
        raise TypeError("func must be callable, not %s" % type(fn).__name__)
    if not isinstance(args, tuple):
        raise TypeError("args must be a tuple, not %s" % type(args).__name__)
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError("kwargs must be a dict, not %s" % type(kwargs).__name__)
    if n_repeat is not None and _whole("n_repeat", n_repeat) < 1:
        raise ValueError("n_repeat must be a positive int")
    if max_duration is not None and not _args.number("max_duration", max_duration) > 0:
        raise ValueError("max_duration must be a positive number of seconds")
    if _whole("n_warmup", n_warmup) < 0:
        raise ValueError("n_warmup must be 0 or more")
    if not _args.number("max_noise", max_noise) > 0:
        raise ValueError("max_noise must be positive")
    name = _args.string("name", name)
    min_time, timeout = _args.number("min_time", min_time, 0), _args.number("timeout", timeout, 0)
    l2_flush = _args.flag("l2_flush", l2_flush)
    if devices is None:
        devices = [_gpujit.current_device()]
    if isinstance(devices, (str, bytes)) or not hasattr(devices, "__iter__"):
        raise TypeError("devices must be a sequence of device numbers, not %s" % type(devices).__name__)
    devices = [_whole("devices[%d]" % i, d) for i, d in enumerate(devices)]
    if n_repeat is not None:  # cupyx: n_repeat samples, or as many as max_duration allows
        spec = (n_repeat, n_repeat, 0.0, 0.0 if max_duration is None or max_duration == float("inf")
                else float(max_duration))
    else:
        spec = (10, 100000, float(min_time), float(timeout if max_duration is None else min(timeout, max_duration)))
    d = _gpujit.benchmark(fn, args, kwargs, devices, n_warmup, spec[0], spec[1], spec[2], spec[3],
                          float(max_noise), bool(l2_flush))
    return BenchmarkResult(name or _name_of(fn), d, _regions._timed_tables(devices))


def _name_of(fn) -> str:
    """A benchmark's line is named after what it times: a kernel as it was asked for
    ("scale<float>", a symbol demangled), a function by its name (as cupyx names it)."""
    kernel = getattr(fn, "name", None)
    if isinstance(kernel, str) and kernel:
        return _gpujit.demangle(kernel) if kernel.startswith("_Z") else kernel
    return getattr(fn, "__name__", None) or type(fn).__name__  # cupyx's: the function's own name
