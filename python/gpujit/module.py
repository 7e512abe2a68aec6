"""Modules: CUDA C++ compiled by gpujit (NVRTC, nvJitLink, the kernel cache)."""
from __future__ import annotations

import os
from typing import Iterable, Mapping, Optional, Sequence, Union

from . import _args, _gpujit



def demangle(name: str) -> str:
    """A C++ symbol as people read it (``demangle("_Z5scalePfi")`` is ``"scale(float*, int)"``);
    any other name as it is."""
    if not isinstance(name, str):
        raise TypeError("name must be a str, not %s" % type(name).__name__)
    return _gpujit.demangle(name)


def _readable(symbol: str) -> str:
    """A kernel's symbol as people read it: scale<float>(float*, float, int), with the symbol
    beside it where it is mangled (what symbol() and kernel() also take)."""
    d = _gpujit.demangle(symbol)
    if d == symbol:
        return symbol
    return "%s [%s]" % (d[5:] if d.startswith("void ") else d, symbol)

class Kernel(_gpujit.Kernel):
    """A kernel of a built module. Call it to launch:
    ``kernel(grid, block, *args, shared=0, stream=None)``.

    ``grid``/``block``: an int or a tuple of up to three. ``args``: CuPy arrays, PyTorch CUDA
    tensors, Numba device arrays or anything with ``__cuda_array_interface__`` or ``__dlpack__``
    for pointers (an int is taken as a device address); Python ints and floats where the
    parameter's type is known, NumPy scalars anywhere; ``bytes`` for a struct passed by value.
    ``stream``: None (CUDA's legacy default stream, where CuPy and PyTorch work unless told
    otherwise), a CuPy or PyTorch stream, an object with ``__cuda_stream__``, or a raw handle.
    The kernel runs on the current device (CuPy's or PyTorch's), loaded there on first use.
    Attributes: ``name``, ``symbol``, ``params`` (``[(type, bytes), ...]``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        params = self.params
        return "<gpujit.Kernel %s(%s)>" % (self.name, "?" if params is None else ", ".join(t for t, _ in params))


class Module:
    """A built module: its image and what the build did.

    ``kernels`` (symbols in the image), ``cache_hit`` (True: served by the cache; False: compiled;
    None: no cache), ``miss_reason`` (why a compiled module missed the cache: the header that
    changed and how, what differs from the module's last build — an option, a define, the arch,
    the toolkit, the source — or that it was never built; None for a hit or without a cache),
    ``compile_ms`` (the compile this build did: 0.0 for a cache hit), ``saved_compile_ms`` (for a
    cache hit, the compile it saved: what the build that stored the entry took; None otherwise), ``lean`` (the lean pass ran), ``image`` (the cubin, PTX or LTO-IR bytes),
    ``output`` ("cubin", "ptx", "ltoir"), ``arch``, ``name``, ``log``."""

    def __init__(self, d: dict):
        # d: the module's record, with the keys of `gpujit build --json` (docs/json.md; the
        # library's gpujit_module_record makes both), and its name, image, log, cache status.
        self._d = d
        self.name: str = d["name"]
        self.arch: str = d["arch"]
        self.output: str = d["kind"]
        self.image: bytes = d["image"]
        self.kernels: list = list(d["kernels"])
        self.cache_hit: Optional[bool] = {"hit": True, "miss": False}.get(d["cache"])
        self.compile_ms: float = d["time_ms"]["compile"]
        self.saved_compile_ms: Optional[float] = d["time_ms"].get("saved") if self.cache_hit else None
        self.total_ms: float = d["time_ms"]["total"]
        self.lean: bool = "lean" in d
        self.log: str = d["log"]
        self.cache_key: Optional[str] = d.get("key")
        self.miss_reason: Optional[str] = d.get("miss_reason")
        self._lowered: dict = dict(d["lowered_names"])
        self._handle = d["handle"]
        self._kernels: dict = {}

    def symbol(self, name: str) -> str:
        """The symbol of kernel ``name``: an ``extern "C"`` name, a mangled symbol, or a name
        expression given at build (``"scale<float>"``). Raises KeyError when there is none."""
        if not isinstance(name, str):
            raise TypeError("name must be a str (a kernel's name), not %s" % type(name).__name__)
        if name in self._lowered and self._lowered[name]:
            return self._lowered[name]
        if name in self.kernels:
            return name
        raise KeyError("no kernel %r in module %r (kernels: %s)" % (name, self.name, ", ".join(
            _readable(k) for k in self.kernels) or "none"))

    def kernel(self, name: str, signature: Optional[str] = None) -> "Kernel":
        """Kernel ``name`` (an ``extern "C"`` name, a mangled symbol or a name expression given at
        build), ready to launch: ``k(grid, block, *args, shared=0, stream=None)``.

        A C++ kernel's parameter types come from its mangled symbol. An ``extern "C"`` kernel's
        image gives only sizes, so its 4- and 8-byte scalars need NumPy scalars, or a
        ``signature`` written in C (``"int n, float a, const float *x, float *y"``), checked
        against the image. Raises KeyError when the module has no such kernel."""
        if not isinstance(name, str):
            raise TypeError("name must be a str (a kernel's name), not %s" % type(name).__name__)
        if signature is not None and not isinstance(signature, str):
            raise TypeError("signature must be a str such as \"int n, float *x\", or None, not %s"
                            % type(signature).__name__)
        key = (name, signature)
        k = self._kernels.get(key)
        if k is None:
            k = Kernel(self._handle, self.symbol(name), name, signature)
            self._kernels[key] = k
        return k

    def __repr__(self) -> str:
        return "<gpujit.Module %s %s %s, %d kernel(s), %s>" % (
            self.name, self.arch, self.output, len(self.kernels),
            "cache hit (saved %.1f ms of compiling)" % (self.saved_compile_ms or 0.0) if self.cache_hit
            else {False: "compiled", None: "no cache"}[self.cache_hit])


def build(path: Optional[Union[str, os.PathLike]] = None, *, source: Optional[str] = None, name: Optional[str] = None,
          arch: Optional[str] = None,
          options: Optional[Sequence[str]] = None, defines: Optional[Union[Mapping[str, object], Iterable[str]]] = None,
          include_dirs: Optional[Sequence[Union[str, os.PathLike]]] = None,
          name_expressions: Optional[Sequence[str]] = None, cache: Union[bool, str, os.PathLike] = True,
          time_trace: Optional[Union[str, os.PathLike]] = None, lean: bool = True) -> Module:
    """Build a module from a file (``build(path)``) or from source text (``build(source=text)``).

    ``path``: a file (str or PathLike). ``source``: CUDA C++ source text, named ``name`` (default
    "module.cu") in diagnostics; its quote includes resolve in the working directory. One of the
    two, never a guess: text given as the path is refused with a TypeError saying to pass
    ``source=``. ``arch``: "sm_90", "compute_90", …
    (default: $GPUJIT_ARCH, else the GPU's, else sm_90). ``options``: NVRTC options passed through.
    ``defines``: {"N": 4} or ["N=4"] (a key is a macro name; True and False define 1 and 0, None
    no value). ``name_expressions``: template kernels to instantiate ("scale<float>"), looked up
    with ``Module.kernel``. ``cache``: True (the default cache), False,
    or a cache directory (made when missing; ValueError when it cannot be). ``time_trace``: write a Trace Event Format file of the build there.
    ``lean``: the lean pass (True, the default, or False). A wrong type or value of any of them is a
    TypeError or ValueError that names it.

    Raises ``CompileError`` (diagnostics with file:line:col in its message and ``log``), or the
    exception class of any other gpujit error."""
    if (path is None) == (source is None):
        raise TypeError("build() takes a file path or source= text (one of the two): build(\"kernels.cu\") or "
                        "build(source=text)")
    if source is not None:
        if not isinstance(source, str):
            raise TypeError("source must be CUDA C++ source text (str), not %s" % type(source).__name__)
        if not source.strip():
            raise ValueError("source is empty: give CUDA C++ source text")
        paths, sources = None, [(_args.string("name", name) or "module.cu", source)]
    elif isinstance(path, (str, os.PathLike)):
        p = os.fspath(path)
        if not isinstance(p, str):
            raise TypeError("path must be a str or PathLike of one, not bytes")
        if not p.strip():
            raise ValueError("path is empty: give a file path, or source= for source text")
        if ("\n" in p or "{" in p) and not os.path.exists(p):
            raise TypeError("path %r is source text, not a file: pass it as gpujit.build(source=...)" % (p[:60],))
        paths, sources = [p], None
    else:
        raise TypeError("path must be a file path (str or PathLike), not %s; source text goes in source="
                        % type(path).__name__)
    if not isinstance(cache, (bool, str, os.PathLike)):
        raise TypeError("cache must be True, False or a cache directory, not %s" % type(cache).__name__)
    if arch is not None and not isinstance(arch, str):
        raise TypeError("arch must be a str such as 'sm_90', not %s" % type(arch).__name__)
    cache_dir = None
    if not isinstance(cache, bool):
        cache_dir, cache = os.fspath(cache), True
        if not os.path.isdir(cache_dir):  # made now, or said why not: never a build quietly uncached
            try:
                os.makedirs(cache_dir, exist_ok=True)
            except OSError as e:
                raise ValueError("cache=%r: the cache directory cannot be made (%s)" % (cache_dir, e.strerror)) from None
    d = _gpujit.build(paths, sources, arch, _args.str_list("options", options), _args.defines(defines),
                      _args.path_list("include_dirs", include_dirs), _args.str_list("name_expressions", name_expressions),
                      cache, cache_dir, _args.path("time_trace", time_trace),
                      _args.flag("lean", lean))
    return Module(d)
