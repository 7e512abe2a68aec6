"""Calls of a framework's own functions as spans, without touching the framework: watched through
``sys.monitoring`` events local to each function's code (Python 3.12+), under one tool id that the
program does not hold, taken only when there is first something to watch. The framework's
classes, functions and attributes stay the objects the program knows (identity, ``__qualname__``,
pickling), and the program's own tracing, profiling and tool ids are untouched: events local to a
few code objects cost nothing anywhere else."""
import sys
import threading

from . import _record

_observers = {}  # code object -> [(on_start(frame), on_return(frame, value))], either may be None
_starts = {}  # (thread id, code object) -> when that thread's current call of it began (watch())
_tool = []  # the tool id gpujit took, once it took one
_lock = _record.ChildLock()


def unwrapped(f):
    """The function under the wrappers someone put around it (functools.wraps sets __wrapped__)."""
    for _ in range(16):
        inner = getattr(f, "__wrapped__", None)
        if inner is None:
            break
        f = inner
    return f


def code_of(f, name):
    """The code object of function `f` (under its functools.wraps wrappers) when it is the function
    named `name` itself — not a decorator's shared inner function, whose code runs for every
    function it decorates — else None."""
    code = getattr(unwrapped(f), "__code__", None)
    return code if code is not None and code.co_name == name else None


def _guarded(f):
    def call(*args):
        try:
            f(*args)
        except Exception:
            pass
    return call


def _frame_of(code):
    f = sys._getframe(2)
    while f is not None and f.f_code is not code:  # the call's own frame: its arguments
        f = f.f_back
    return f


def _started(code, offset):
    for on_start, _ in _observers.get(code, ()):
        if on_start is not None:
            _guarded(on_start)(_frame_of(code))


def _returned(code, offset, value):
    for _, on_return in _observers.get(code, ()):
        if on_return is not None:
            _guarded(on_return)(_frame_of(code), value)


def _take_tool(mon):
    if _tool:
        return None
    tool = next((i for i in (4, 3) if mon.get_tool(i) is None), None)
    if tool is None:
        return "every sys.monitoring tool id gpujit could take is the program's"
    mon.use_tool_id(tool, "gpujit profile")
    mon.register_callback(tool, mon.events.PY_START, _guarded(_started))
    mon.register_callback(tool, mon.events.PY_RETURN, _guarded(_returned))
    _tool.append(tool)
    return None


def observe(code, on_start=None, on_return=None):
    """on_start(frame) as each call of `code` begins, on_return(frame, value) as it returns (a call
    that raises is not seen before Python 3.15: PY_UNWIND is no local event before it). None, or
    why it cannot be observed."""
    mon = getattr(sys, "monitoring", None)
    if mon is None:
        return "Python %d.%d has no sys.monitoring (3.12+)" % sys.version_info[:2]
    with _lock:
        why = _take_tool(mon)
        if why is not None:
            return why
        if code not in _observers:
            mon.set_local_events(_tool[0], code, mon.events.PY_START | mon.events.PY_RETURN)
        _observers[code] = _observers.get(code, []) + [(on_start, on_return)]  # swapped whole: no lock to read
    return None


def watch(code, on_return, began=None):
    """Call on_return(t0, t1, frame) after each call of `code` returns (a call that raises is not
    seen before Python 3.15). began: when a call already running on this thread began (it is
    watched from its return on). None, or why it cannot be watched."""
    def start(frame):
        _starts[(threading.get_ident(), code)] = _record.now()

    def end(frame, value):
        t0 = _starts.pop((threading.get_ident(), code), None)
        if t0 is not None:
            on_return(t0, _record.now(), frame)

    if began is not None:
        _starts[(threading.get_ident(), code)] = began
    return observe(code, start, end)
