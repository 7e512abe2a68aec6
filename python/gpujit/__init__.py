"""gpujit: JIT-compiled CUDA kernels with a kernel cache that is never stale, compile traces,
timing and profiling — the C library's Python face (one abi3 extension over its public API)."""
from . import cache, trace
from ._errors import *  # noqa: F401,F403 (one exception class per C error code)
from ._errors import GpujitError
from ._gpujit import version as _version
from .module import Module, build

__version__ = _version()
__all__ = ["build", "Module", "cache", "trace", "GpujitError", "CompileError"]
