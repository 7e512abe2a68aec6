"""Timing a framework's compile entry points: the outermost call on a thread is one compile
(entry points call each other: a public compile calls the front end), with the inner calls it
makes as its stages."""
import functools
import threading

from . import _record


class Outer:
    """Per framework: wrap() its entry points; the outermost call on a thread writes one unit."""

    def __init__(self, fw, version):
        self.fw, self.version, self._local = fw, version, threading.local()

    def _state(self):
        if not hasattr(self._local, "depth"):
            self._local.depth, self._local.stages, self._local.extra = 0, [], {}
        return self._local

    def note(self, **extra):
        """Something the current compile learned (its cache outcome, its name)."""
        s = self._state()
        if s.depth:
            s.extra.update(extra)

    def wrap(self, owner, attr, stage, name_of, only_noted=False):
        """owner.attr timed: a stage named `stage`; the unit's name from name_of(args, kwargs).
        only_noted: a call during which nothing noted a cache outcome compiled nothing (a
        module loaded already): no unit."""
        original = getattr(owner, attr, None)
        if original is None or getattr(original, "_gpujit_wrapped", False):
            return False
        outer = self

        @functools.wraps(original)
        def timed(*args, **kw):
            s = outer._state()
            s.depth += 1
            if s.depth == 1:
                s.stages, s.extra = [], {}
            t0 = _record.now()
            ok = False
            try:
                result = original(*args, **kw)
                ok = True
                return result
            finally:
                t1 = _record.now()
                s.depth -= 1
                try:
                    if s.depth or not s.stages:  # the outermost call is the unit itself, not a stage of it
                        s.stages.append((stage, t0, t1))
                    if s.depth == 0 and not (only_noted and "cache" not in s.extra):
                        name = name_of(args, kw)
                        extra = dict(s.extra)
                        cache = extra.pop("cache", "miss")
                        _record.unit(outer.fw, str(extra.pop("name", None) or name), t0, t1,
                                     sorted(s.stages, key=lambda x: x[1])[:16], cache=cache,
                                     version=outer.version(), error="" if ok else "raised", **extra)
                except Exception:
                    pass

        timed._gpujit_wrapped = True
        setattr(owner, attr, timed)
        return True
