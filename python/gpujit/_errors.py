"""gpujit's exceptions: one class for every C error code (include/gpujit/error.h)."""
from __future__ import annotations

import errno

from . import _gpujit


class GpujitError(_gpujit.Error):
    """An error from gpujit's C library.

    Attributes: ``code`` (the C error code), ``name`` (its symbol, e.g. ``"GPUJIT_ECOMPILE"``),
    ``message`` (what failed, naming the input), ``log`` (a compile's diagnostics, else "").
    Each class also derives from the built-in exception a caller would catch for it: a missing
    file or device is a ``FileNotFoundError``, an invalid argument a ``ValueError``, an I/O
    failure an ``OSError``, running out of memory a ``MemoryError``."""

    code = 0

    def __new__(cls, code: int = 0, name: str = "", message: str = "", log: str = "", *rest):
        if issubclass(cls, OSError):  # OSError's layout: its own constructor, with the errno it stands for
            return OSError.__new__(cls, _ERRNO.get(name, 0), message)
        return super().__new__(cls, message)

    def __init__(self, code: int, name: str, message: str, log: str = ""):
        self.code, self.name, self.message, self.log = code, name, message, log
        super().__init__(message + ("\n" + log.rstrip() if log else ""))

    def __str__(self) -> str:
        return self.message + ("\n" + self.log.rstrip() if self.log else "")

    def __reduce__(self):
        return (type(self), (self.code, self.name, self.message, self.log))


GpujitError.__module__ = "gpujit"

_ERRNO = {"GPUJIT_ENOENT": errno.ENOENT, "GPUJIT_ENOTOOLKIT": errno.ENOENT, "GPUJIT_ENODEVICE": errno.ENODEV, "GPUJIT_EIO": errno.EIO}

# the built-in exception each code also is
_BUILTIN = {"ENOENT": FileNotFoundError, "EINVAL": ValueError, "EIO": OSError, "ENOMEM": MemoryError,
            "EUNSUPPORTED": NotImplementedError, "ENODEVICE": FileNotFoundError, "EPARSE": ValueError,
            "ENOTOOLKIT": FileNotFoundError}


def _class_name(symbol: str) -> str:
    # GPUJIT_ECOMPILE -> CompileError, GPUJIT_ENODRIVER -> NoDriverError
    special = {"EINVAL": "InvalidArgumentError", "ENOMEM": "OutOfMemoryError", "EIO": "GpujitIOError",
               "ENOENT": "NotFoundError", "EVERSION": "VersionError", "ECOMPILE": "CompileError",
               "ELINK": "LinkError", "ENVRTC": "NvrtcError", "EPARSE": "ParseError", "ECORRUPT": "CorruptError",
               "ENODRIVER": "NoDriverError", "ENODEVICE": "NoDeviceError", "ECUDA": "CudaError",
               "EBUSY": "BusyError", "EUNSUPPORTED": "UnsupportedError", "ECANCELLED": "CancelledError",
               "EWORKER": "WorkerError", "ENOTOOLKIT": "NoToolkitError"}
    short = symbol[len("GPUJIT_"):]
    return special.get(short, short.title() + "Error")


_BY_CODE: dict[int, type] = {}
for _code, (_symbol, _text) in sorted(_gpujit.error_names().items(), reverse=True):
    _base = _BUILTIN.get(_symbol[len("GPUJIT_"):])
    _cls = type(_class_name(_symbol), (GpujitError,) + ((_base,) if _base else ()),
                {"code": _code, "__doc__": "%s: %s." % (_symbol, _text), "__module__": "gpujit"})
    _BY_CODE[_code] = _cls
    globals()[_cls.__name__] = _cls
del _code, _symbol, _text, _cls, _base


# The extension raises these classes itself, straight from the C call: no wrapper re-raises.
_gpujit._set_error_classes(dict(_BY_CODE))


__all__ = ["GpujitError"] + sorted(c.__name__ for c in _BY_CODE.values())
