"""The kernel cache: counters, disk use and clearing (the same cache the CLI uses)."""
from __future__ import annotations

import os
from typing import Optional, Union

from . import _args, _gpujit


def stats(directory: Optional[Union[str, os.PathLike]] = None) -> dict:
    """The cache's counters, with the keys of ``gpujit cache stats --json``: path, entries, bytes
    (disk use, what the size limit counts), hits, misses, uncacheable (builds that cannot be cached:
    not misses), hit_rate (None before any lookup),
    stores, corrupt, compile_ms_saved, limit_bytes (0: none). ``directory``: default cache
    ($GPUJIT_CACHE_DIR, else $XDG_CACHE_HOME/gpujit, else ~/.cache/gpujit — the library's one
    rule, which ``gpujit env`` shows)."""
    return _gpujit.cache_stats(_args.path("directory", directory))


def clear(directory: Optional[Union[str, os.PathLike]] = None) -> int:
    """Remove every entry; returns how many were removed. Like ``stats`` and ``export``, it makes
    nothing: a missing directory is an empty cache (0 removed), and a directory holding files that
    are no gpujit cache's raises ``InvalidArgumentError`` and is left alone."""
    return _gpujit.cache_clear(_args.path("directory", directory))


def _dir(directory):
    return _args.path("directory", directory)


def limit(size: Optional[Union[str, int, float]] = None,
          directory: Optional[Union[str, os.PathLike]] = None) -> dict:
    """The cache's size limit on disk use. With ``size``, keep it as the cache's setting and evict
    down to it now. ``size`` reads as ccache's ``-M``: a number alone is GiB (``limit(5)`` is 5 GiB,
    as ``ccache -M 5``), ``"500MB"``/``"2GB"`` (and ``k``, ``M``, ``G``, ``T``) are powers of 1000,
    ``"512MiB"``/``"2GiB"`` (and ``Ki``, ``Mi``, ``Gi``, ``Ti``) powers of 1024, ``"4096B"`` is
    bytes, ``0`` or ``"none"`` is no limit. Returns ``{"limit_bytes", "source"}`` as ``gpujit
    cache limit --json`` does (0: no limit; source: where the limit came from), and when ``size``
    was given, ``"evicted"`` and ``"evicted_bytes"``: the entries the new limit removed."""
    if size is not None and (isinstance(size, bool) or not isinstance(size, (str, int, float))):
        raise TypeError("size must be a str such as '2GB', or a number of GiB, not %s" % type(size).__name__)
    if isinstance(size, (int, float)) and not size >= 0:
        raise ValueError("size must be a number of GiB >= 0, not %r" % size)
    text = None if size is None else size if isinstance(size, str) else repr(size)
    b, source, evicted, freed = _gpujit.cache_limit(_dir(directory), text)
    out = {"limit_bytes": b, "source": source}
    if size is not None:
        out.update(evicted=evicted, evicted_bytes=freed)
    return out


def export(path: Union[str, os.PathLike], *, used_since: float = 0.0,
           directory: Optional[Union[str, os.PathLike]] = None) -> int:
    """Write the cache's entries (those used since the Unix time ``used_since``, else all), with
    their manifests and dependency groups, into an archive (``.tar.zst``, ``.tar.gz``, ``.tar``).
    Returns how many entries were written."""
    return _gpujit.cache_export(_dir(directory), _args.path("path", path), _args.number("used_since", used_since, 0))


def import_(path: Union[str, os.PathLike], *, directory: Optional[Union[str, os.PathLike]] = None) -> dict:
    """Import an archive made by ``export``: every entry is verified before it is stored, a hostile
    archive is refused whole. Returns ``{"entries", "present", "manifests", "rejected"}``."""
    return _gpujit.cache_import(_dir(directory), _args.path("path", path))
