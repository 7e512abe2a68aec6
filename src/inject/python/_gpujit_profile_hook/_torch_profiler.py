"""torch.profiler's own steps as the profile's: each return of ``torch.profiler.profile.step`` (the
``profiler.step()`` a training or simulation loop calls after each step) is a step boundary, passed to
the injection library's step entry point — the one ``gpujit.step()`` and ``gpujit_profile_step()``
reach — with the torch source, so ``gpujit profile --schedule`` counts the program's steps with no
change to it. Watched through ``sys.monitoring`` (3.12+): the profiler's class stays the program's."""
import ctypes
import sys

from . import _record, _watch

_TORCH = 1  # GPUJIT_STEP_SRC_TORCH (src/inject/protocol.h)


def _entry():
    try:  # the injection library, preloaded; or an in-process session's, by its path (loaded RTLD_LOCAL)
        return ctypes.CDLL(_record.INJECT or None).gpujit_inject_step
    except (AttributeError, OSError):
        return None


def install_torch(module):
    cls = getattr(module, "profile", None)
    code = _watch.code_of(getattr(cls, "step", None), "step")
    if code is None:
        raise RuntimeError("torch %s has no profiler.profile.step" % getattr(sys.modules.get("torch"), "__version__", "?"))
    step = _entry()
    if step is None:
        _record.note("adapter-torch-profiler", "the injection library's step entry point is not in this process: "
                     "torch.profiler's steps are not counted")
        return
    step.argtypes = [ctypes.c_int]
    step.restype = None
    why = _watch.observe(code, on_return=lambda frame, value: step(_TORCH))
    if why is not None:
        _record.note("adapter-torch-profiler", "torch.profiler's steps cannot be watched (%s): use gpujit.step() or "
                     "--step nvtx:NAME" % why)
