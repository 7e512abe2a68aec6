"""gpujit: JIT-compiled CUDA kernels with a kernel cache that is never stale, compile traces,
timing and profiling — the C library's Python face (one abi3 extension over its public API)."""
from . import cache, trace
from ._config import config, show_config
from ._errors import *  # noqa: F401,F403 (one exception class per C error code)
from ._errors import GpujitError
from ._gpujit import version as _version
from ._profile import profile
from ._steps import schedule, step
from .bench import BenchmarkResult, benchmark
from .module import Kernel, Module, build, demangle
from .regions import Region, RegionTable, include_dir
from .timing import (TIMING_ALL, TIMING_GRAPH, TIMING_KERNEL, TIMING_MEMCPY, TIMING_MEMSET, ScopedTimer,
                     TimingResult, TimingResults, synchronize, timing_begin, timing_end, timing_print)

__version__ = _version()
__all__ = ["build", "demangle", "Module", "Kernel", "cache", "trace", "GpujitError", "CompileError", "ScopedTimer",
           "TimingResult", "TimingResults", "timing_begin", "timing_end", "timing_print", "synchronize", "benchmark",
           "BenchmarkResult", "profile", "include_dir", "Region", "RegionTable", "step", "schedule", "TIMING_ALL", "TIMING_KERNEL", "TIMING_MEMCPY", "TIMING_MEMSET", "TIMING_GRAPH",
           "config", "show_config"]
