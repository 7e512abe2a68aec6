"""What gpujit builds and runs with, as ``cupy.show_config()`` tells CuPy's: ``config()`` returns it,
``show_config()`` prints it."""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, Optional, TextIO

from . import _gpujit


def config() -> Dict[str, Any]:
    """The toolkit, NVRTC, nvJitLink, ptxas, CUPTI, CUDA driver and cache in effect, with the keys of
    ``gpujit version --json`` (docs/json.md): ``gpujit`` (its version), ``toolkit`` (``root``,
    ``origin``: default, CUDA_PATH, CUDA_HOME or pip; ``problem``: why builds fail, or None),
    ``nvrtc`` and ``nvjitlink`` (``version``, ``path``, ``from_env``), ``ptxas`` and ``cupti`` (a
    path, or None), ``driver`` (``version``, ``devices``; ``problem``: why there is no driver, or
    None), ``cache`` (``path``, ``path_source``, ``limit_bytes``, ``limit_source``), and
    ``settings``: the gpujit variables set in the environment (``gpujit env`` explains each)."""
    out = _gpujit.config()
    out["settings"] = {k: v for k, v in sorted(os.environ.items())
                       if v and (k.startswith("GPUJIT_") or k in ("CUDA_PATH", "CUDA_HOME"))}
    return out


def _size(n: int) -> str:
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return "%.1f %s" % (n / scale, unit)
    return "%d B" % n


def show_config(file: Optional[TextIO] = None) -> None:
    """Print ``config()`` as lines a person reads (to ``file``, default ``sys.stdout``)."""
    c = config()
    f = file if file is not None else sys.stdout
    tk = c["toolkit"]
    rows = [("gpujit", c["gpujit"]),
            ("toolkit", "%s (%s)" % (tk["root"], tk["origin"]) if not tk["problem"] else "none: " + tk["problem"])]
    for key, name in (("nvrtc", "NVRTC"), ("nvjitlink", "nvJitLink")):
        lib = c[key]
        rows.append((name, "%s (%s)" % (lib["version"], lib["path"]) if lib["version"] else "none"))
    rows.append(("ptxas", c["ptxas"] or "none"))
    rows.append(("CUPTI", c["cupti"] or "none"))
    d = c["driver"]
    rows.append(("driver", "%s (%d device%s)" % (d["version"], d["devices"], "" if d["devices"] == 1 else "s")
                 if d["version"] else "no driver: " + (d["problem"] or "?")))
    ca = c["cache"]
    rows.append(("cache", "%s (%s)" % (ca["path"], ca["path_source"])))
    rows.append(("cache limit", "%s (%s)" % (_size(ca["limit_bytes"]), ca["limit_source"])
                 if ca["limit_bytes"] else "none"))
    for k, v in c["settings"].items():
        rows.append((k, v))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print("%-*s  %s" % (width, k, v), file=f)
