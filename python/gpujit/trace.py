"""Compile traces: what `gpujit trace analyze` reports, as plain dicts."""
from __future__ import annotations

import os
from typing import Optional, Union

from . import _args, _gpujit


def analyze(*paths: Union[str, os.PathLike]) -> dict:
    """Analyze gpujit traces, raw NVRTC/nvcc ``--fdevice-time-trace`` files, profile traces, or
    directories of them. Returns ``{"files", "events", "recorded", "unmeasured", "tables"}``:
    ``tables`` maps "phases", "headers", "templates", "instantiations", "functions" and
    "modules" to rows ``{"name", "total_ms", "max_ms", "count"}``, largest total first;
    ``recorded``/``unmeasured``: cache hits whose compile profile was/was not recorded."""
    if not paths:
        raise TypeError("analyze() needs at least one trace file or directory")
    r = _gpujit.analyze([_args.path("analyze() paths", p) for p in paths])
    r["tables"] = {t: [{"name": n, "total_ms": tot / 1e3, "max_ms": mx / 1e3, "count": c} for n, tot, mx, c in rows]
                   for t, rows in r["tables"].items()}
    return r


def diff(base, new, *, fail_above_pct: Optional[float] = None, min_ms: float = 0.0) -> dict:
    """Compare traces as `gpujit trace diff` does: ``base`` and ``new`` are a path or a list of
    paths (files or directories; several builds of a module give it several samples). Returns
    ``{"total", "tables", "verdict"}``: rows ``{"name", "base_ms", "new_ms", "delta_ms",
    "delta_pct", "base_spread_ms", "new_spread_ms", "base_samples", "new_samples", "p_value",
    "change", "regression"}``; ``verdict["failed"]`` is the CI gate's answer when
    ``fail_above_pct`` is given (a module or the total slower by more than that, and by at least
    ``min_ms``)."""
    def paths(what, v):
        return [_args.path(what, p) for p in (v if isinstance(v, (list, tuple)) else [v])]
    gate = -1.0 if fail_above_pct is None else _args.number("fail_above_pct", fail_above_pct, 0)
    floor = _args.number("min_ms", min_ms, 0)
    return _gpujit.diff(paths("base", base), paths("new", new), gate, floor)
