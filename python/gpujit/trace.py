"""Compile traces: what `gpujit trace analyze` reports, as plain dicts."""
from __future__ import annotations

import os
from typing import Union

from . import _gpujit
from ._errors import _raise_from


def analyze(*paths: Union[str, os.PathLike]) -> dict:
    """Analyze gpujit traces, raw NVRTC/nvcc ``--fdevice-time-trace`` files, profile traces, or
    directories of them. Returns ``{"files", "events", "recorded", "unmeasured", "tables"}``:
    ``tables`` maps "phases", "headers", "templates", "instantiations", "functions" and
    "modules" to rows ``{"name", "total_ms", "max_ms", "count"}``, largest total first;
    ``recorded``/``unmeasured``: cache hits whose compile profile was/was not recorded."""
    if not paths:
        raise TypeError("analyze() needs at least one trace file or directory")
    try:
        r = _gpujit.analyze([os.fspath(p) for p in paths])
    except _gpujit.Error as e:
        _raise_from(e)
    r["tables"] = {t: [{"name": n, "total_ms": tot / 1e3, "max_ms": mx / 1e3, "count": c} for n, tot, mx, c in rows]
                   for t, rows in r["tables"].items()}
    return r
