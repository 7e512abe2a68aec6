"""A stand-in for Triton 3.4-3.6, laid out as the real package is where gpujit's hook looks:
triton.knobs (knobs.py: a class per group, `listener` a class attribute until set on the
instance, copy() and scope(), HookChain) and triton.compiler.compiler.compile, which reads the
listener once, first, times its stages only when there is one, and calls it at the end. No GPU:
a source named "cached:NAME" is a cache hit."""
__version__ = "3.6.0+fake"

from . import knobs  # noqa: E402,F401
from .compiler import compile  # noqa: E402,F401
from .runtime import autotuner  # noqa: E402,F401
