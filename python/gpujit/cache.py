"""The kernel cache: counters, disk use and clearing (the same cache the CLI uses)."""
from __future__ import annotations

import os
from typing import Optional, Union

from . import _gpujit
from ._errors import _raise_from


def stats(directory: Optional[Union[str, os.PathLike]] = None) -> dict:
    """The cache's counters: path, entries, bytes (disk use, what the size limit counts), hits,
    misses, stores, corrupt, compile_ms_saved, limit (0: none). ``directory``: default cache
    ($GPUJIT_CACHE_DIR, else ~/.cache/gpujit)."""
    try:
        return _gpujit.cache_stats(None if directory is None else os.fspath(directory))
    except _gpujit.Error as e:
        _raise_from(e)


def clear(directory: Optional[Union[str, os.PathLike]] = None) -> int:
    """Remove every entry; returns how many were removed."""
    try:
        return _gpujit.cache_clear(None if directory is None else os.fspath(directory))
    except _gpujit.Error as e:
        _raise_from(e)
