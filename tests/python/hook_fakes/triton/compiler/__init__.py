from .compiler import CompileTimer, compile  # noqa: F401
