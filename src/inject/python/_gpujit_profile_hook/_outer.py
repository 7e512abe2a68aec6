"""Timing a framework's compile entry points: the outermost call on a thread is one compile
(entry points call each other: a public compile calls the front end), with the inner calls it
makes as its stages.

The entry points are watched through _watch (sys.monitoring events local to their code): the
framework's functions and classes stay the objects the program knows. Before Python 3.12 there
is no such way, and nothing is put in their place: watch() raises, and the adapter's note says
that its compiles are not in the report."""
import threading

from . import _record, _watch

CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08


def arguments(frame):
    """A call's arguments by parameter name, read from its frame as the call begins (defaults
    filled in; *args as a tuple, **kwargs as a dict, under their own names)."""
    code, local = frame.f_code, frame.f_locals
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & CO_VARARGS) + bool(code.co_flags & CO_VARKEYWORDS)
    return {name: local[name] for name in code.co_varnames[:n] if name in local}


def _observe(owner, attr, start, end):
    """start(frame) and end(frame, value) around each call of owner.attr, the framework's function
    left in place. False where owner has no such function; raises where it cannot be watched (a
    decorator's shared inner function, or no sys.monitoring before Python 3.12)."""
    original = getattr(owner, attr, None)
    if original is None:
        return False
    code = _watch.code_of(original, attr)
    if code is None:
        raise RuntimeError("%s.%s is not a function of that name (a decorator's?)" % (owner.__name__, attr))
    why = _watch.observe(code, start, end)
    if why is not None:
        raise RuntimeError(why)
    return True


class Outer:
    """Per framework: watch() its entry points; the outermost call on a thread writes one unit."""

    def __init__(self, fw, version):
        self.fw, self.version, self._local = fw, version, threading.local()

    def _state(self):
        s = self._local
        if not hasattr(s, "stack"):
            s.stack, s.stages, s.extra = [], [], {}
        return s

    def note(self, **extra):
        """Something the current compile learned (its cache outcome, its name)."""
        s = self._state()
        if s.stack:
            s.extra.update(extra)

    def _begin(self, key, params):
        s = self._state()
        if not s.stack:
            s.stages, s.extra = [], {}
        s.stack.append((key, _record.now(), params))

    def _end(self, key, stage, name_of, only_noted, ok):
        """The call `key` returned (or raised): its stage, and the unit where it was the outermost.
        Calls above it on the stack that never returned (they raised) go with it."""
        s = self._state()
        at = next((i for i in range(len(s.stack) - 1, -1, -1) if s.stack[i][0] is key), None)
        if at is None:
            return
        _, t0, params = s.stack[at]
        del s.stack[at:]
        t1 = _record.now()
        if s.stack or not s.stages:  # the outermost call is the unit itself, not a stage of it
            s.stages.append((stage, t0, t1))
        if not s.stack and not (only_noted and "cache" not in s.extra):
            extra = dict(s.extra)
            cache = extra.pop("cache", "miss")
            _record.unit(self.fw, str(extra.pop("name", None) or name_of(params)), t0, t1,
                         sorted(s.stages, key=lambda x: x[1])[:16], cache=cache,
                         version=self.version(), error="" if ok else "raised", **extra)

    def watch(self, owner, attr, stage, name_of, only_noted=False):
        """owner.attr timed: a stage named `stage`; the unit's name from name_of(params), its
        arguments by name. only_noted: a call during which nothing noted a cache outcome compiled
        nothing (a module loaded already): no unit. False where owner has no such function."""
        def start(frame):
            s = self._state()  # a call that raised left its entry: one not on this call's stack goes
            live = set()
            f = frame.f_back
            while f is not None:
                live.add(id(f))
                f = f.f_back
            s.stack[:] = [e for e in s.stack if id(e[0]) in live]
            self._begin(frame, arguments(frame))

        def end(frame, value):
            self._end(frame, stage, name_of, only_noted, True)

        return _observe(owner, attr, start, end)

    def on_return(self, owner, attr, noted):
        """noted(params, value) after each call of owner.attr returns: what it says of the current
        compile (its cache outcome), for note(). False where owner has no such function."""
        params = {}  # per thread: the arguments as the call began

        def start(frame):
            params[threading.get_ident()] = arguments(frame)

        def end(frame, value):
            noted(params.pop(threading.get_ident(), {}), value)

        return _observe(owner, attr, start, end)
