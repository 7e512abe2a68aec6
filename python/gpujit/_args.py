"""Arguments checked before they reach the C layer: each mistake is a TypeError or ValueError
that names the argument, never a value quietly taken for another."""
from __future__ import annotations

import math
import os
import re
from typing import Mapping, Optional

_MACRO = re.compile(r"[A-Za-z_]\w*(\([^()]*\))?\Z")


def path(what: str, v) -> Optional[str]:
    """A path (str or PathLike) as str; None stays None; anything else a TypeError naming ``what``."""
    if v is None:
        return None
    if not isinstance(v, (str, os.PathLike)):
        raise TypeError("%s must be a path (str or os.PathLike), not %s" % (what, type(v).__name__))
    p = os.fspath(v)
    if not isinstance(p, str):
        raise TypeError("%s must be a path as str, not bytes" % what)
    return p


def string(what: str, v) -> Optional[str]:
    """A str; None stays None."""
    if v is not None and not isinstance(v, str):
        raise TypeError("%s must be a str, not %s" % (what, type(v).__name__))
    return v


def str_list(what: str, v) -> Optional[list]:
    """A sequence of str (None stays None); a lone str is refused, not taken letter by letter."""
    if v is None:
        return None
    if isinstance(v, (str, bytes)):
        raise TypeError("%s must be a sequence of str, not a single %s" % (what, type(v).__name__))
    try:
        out = list(v)
    except TypeError:
        raise TypeError("%s must be a sequence of str, not %s" % (what, type(v).__name__)) from None
    for x in out:
        if not isinstance(x, str):
            raise TypeError("%s must hold str, not %s" % (what, type(x).__name__))
    return out


def path_list(what: str, v) -> Optional[list]:
    """A sequence of paths (str or PathLike) as str; a lone path is refused."""
    if v is None:
        return None
    if isinstance(v, (str, bytes, os.PathLike)):
        raise TypeError("%s must be a sequence of paths, not a single %s (write [%r])" % (what, type(v).__name__, v))
    out = []
    try:
        v = list(v)
    except TypeError:
        raise TypeError("%s must be a sequence of paths, not %s" % (what, type(v).__name__)) from None
    for x in v:
        if not isinstance(x, (str, os.PathLike)):
            raise TypeError("%s must hold paths (str or os.PathLike), not %s" % (what, type(x).__name__))
        out.append(os.fspath(x))
    return out


def defines(v) -> Optional[list]:
    """{"N": 4, "DEBUG": True, "FLAG": None} or ["N=4"] as -D strings. A key is a macro name (NAME
    or NAME(args)); a value is a str, an int, a float, a bool (1 or 0) or None (no value)."""
    if v is None or not isinstance(v, Mapping):
        if v is not None and not hasattr(v, "__iter__"):
            raise TypeError("defines must be a mapping {\"N\": 4} or a sequence [\"N=4\"], not %s" % type(v).__name__)
        return str_list("defines", v)
    out = []
    for k, x in v.items():
        if not isinstance(k, str) or not _MACRO.match(k):
            raise ValueError("defines: %r is not a macro name (a key is NAME or NAME(args); its value goes in the "
                             "value)" % (k,))
        if x is None:
            out.append(k)
        elif isinstance(x, bool):
            out.append("%s=%d" % (k, x))
        elif isinstance(x, (int, float, str)):
            out.append("%s=%s" % (k, x))
        else:
            raise TypeError("defines[%r] must be a str, int, float, bool or None, not %s" % (k, type(x).__name__))
    return out


def flag(what: str, v) -> bool:
    """True or False, nothing that merely looks true ('no' is a non-empty str)."""
    if not isinstance(v, bool):
        raise TypeError("%s must be True or False, not %r" % (what, v))
    return v


def number(what: str, v, minimum: Optional[float] = None) -> float:
    """A real number (not a bool, not NaN), at least `minimum` when given."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("%s must be a number, not %s" % (what, type(v).__name__))
    if math.isnan(v):
        raise ValueError("%s must be a number, not NaN" % what)
    if minimum is not None and v < minimum:
        raise ValueError("%s must be >= %g, not %r" % (what, minimum, v))
    return float(v)
