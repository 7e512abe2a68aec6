"""Records of the framework adapters: one JSON-lines file per process, in the format of
docs/record-format.md, written as the injection library writes its own (each line one append).

The program owns every descriptor number: it may close ours (``os.closerange``) and open its own
file under the same number, or ``dup2`` over it. So no descriptor is kept between records: each
record opens the file by path, checks it is the file this process made (it begins with this
process's proc record), appends one line and closes it. No lock is held while writing, and the
one lock (making the file) is made anew in a forked child, so a fork while another thread records
cannot leave the child waiting."""
import errno
import json
import os
import sys
import threading
import time

# The names of src/inject/protocol.h this writer uses, in one place: the hook is the standard
# library alone and is copied as it is (no build step reads the header), so it keeps its own
# copy, and test_layers (tests/layers/check_layers.py, check_protocol_py) fails when one differs
# from the header's GPUJIT_RECORD_VERSION, GPUJIT_RECORD_ENV or GPUJIT_RECORD_KINDS.
RECORD_VERSION = 1
ENV_DIR = "GPUJIT_PROFILE_DIR"
KINDS = ("proc", "note", "unit", "bind", "span")

_env_dir = os.environ.get(ENV_DIR) or ""
_DIR = os.path.abspath(_env_dir) if _env_dir else ""  # the program may chdir later


class ChildLock:
    """A lock that a forked child gets anew: one held by another thread at the fork would stay
    held in the child, whose only thread then waits on it forever."""

    _all = []

    def __init__(self):
        self._lock = threading.Lock()
        ChildLock._all.append(self)

    def __enter__(self):
        self._lock.acquire()
        return self

    def __exit__(self, *exc):
        self._lock.release()

    @classmethod
    def _renew(cls):
        for lock in cls._all:
            lock._lock = threading.Lock()


_lock = ChildLock()  # held only while this process's file is made
_file = None  # (pid, path, its proc record's bytes) of this process's file, swapped whole
_noted = set()
_lost = 0  # records this process could not write
_lost_said = 0  # of them, how many a note has told
_lost_marked = set()  # errno values whose lost-PID-ERRNO file exists
_write = os.write  # the one write of a record: a fault test replaces it (full disk)

_APPEND = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK


def _in_child():
    global _file, _noted, _lost, _lost_said, _lost_marked
    ChildLock._renew()
    _file, _noted, _lost, _lost_said, _lost_marked = None, set(), 0, 0, set()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_child)


INJECT = ""  # an in-process session's injection library (gpujit.profile in a plain python): its path


def use(directory, inject=""):
    """An in-process session (gpujit.profile not under `gpujit profile`): records go to `directory`
    from now on ("" : none, the session ended), in a file of its own; `inject` is the injection
    library the session loaded, which ctypes.CDLL(None) does not see."""
    global _DIR, _file, _noted, INJECT
    with _lock:
        _DIR = os.path.abspath(directory) if directory else ""
        _file, _noted = None, set()
        INJECT = inject or ""


def active():
    return bool(_DIR) and os.path.isdir(_DIR)


def now():
    return time.time_ns()


def _tid():
    get = getattr(threading, "get_native_id", None)  # 3.8+
    return get() if get else threading.get_ident() & 0x7FFFFFFF


def _ancestors(ppid):
    out = []
    pid = ppid
    for _ in range(16):
        try:
            with open("/proc/%d/stat" % pid, "rb") as f:
                stat = f.read().decode("ascii", "replace")
            pid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if pid <= 1:
            break
        out.append(pid)
    return out


def _cmdline():
    """As the injection library writes it: the interpreter, its flags and the program's."""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            raw = f.read(2047)
        return raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return " ".join(getattr(sys, "argv", None) or [])[:2000]


def _line(rec):
    return (json.dumps(rec, separators=(",", ":")) + "\n").encode("utf-8", "replace")


def _put(fd, data):
    while data:
        n = _write(fd, data)
        if n <= 0:
            raise OSError(errno.EIO, "short write")
        data = data[n:]


def _make():
    """This process's file (a forked child makes its own), its proc record first. A file whose
    proc record could not be written is removed: a reader refuses records without it."""
    global _file
    pid, t = os.getpid(), now()
    path = os.path.join(_DIR, "p%d-%d.jsonl" % (pid, t))
    ppid = os.getppid()
    head = _line({"k": "proc", "v": RECORD_VERSION, "pid": pid, "tid": _tid(), "ppid": ppid, "ancestors": _ancestors(ppid),
                  "writer": "python", "exe": sys.executable or "", "cmd": _cmdline(), "t": t})
    fd = os.open(path, _APPEND | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _put(fd, head)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    os.close(fd)
    _file = (pid, path, head)


def _open():
    """A descriptor on this process's file, opened now, for one append: the file at its path
    is ours where it begins with the proc record this process wrote (its pid and nanosecond)."""
    pid = os.getpid()
    for _ in range(2):  # the file replaced or removed under us: a new one, once
        f = _file
        if f is None or f[0] != pid:
            with _lock:
                if _file is None or _file[0] != pid:
                    _make()
            continue
        try:
            fd = os.open(f[1], _APPEND)
        except FileNotFoundError:
            fd = -1
        if fd >= 0:
            try:
                if os.pread(fd, len(f[2]), 0) == f[2]:
                    return fd
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        with _lock:
            if _file is f:
                _make()
    raise OSError(errno.ESTALE, "the records file keeps changing")


def _mark_lost(err):
    """As the injection library does: an empty lost-PID-ERRNO file beside the records (it needs
    no data block, so it can be made where records cannot be written); once per error."""
    global _lost
    _lost += 1
    if err in _lost_marked:
        return
    _lost_marked.add(err)
    try:
        os.close(os.open(os.path.join(_DIR, "lost-%d-%d" % (os.getpid(), err)),
                         os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600))
    except OSError:
        pass


def _append(rec):
    """One record; False where it could not be written (counted, and said when possible)."""
    try:
        fd = _open()
        try:
            _put(fd, _line(rec))
        finally:
            os.close(fd)
    except OSError as e:
        _mark_lost(e.errno or errno.EIO)
        return False
    return True


def _say_lost():
    """The records lost so far, in a note, once a record can be written again (or at exit)."""
    global _lost_said
    n = _lost
    if n <= _lost_said:
        return
    codes = ", ".join(errno.errorcode.get(c, str(c)) for c in sorted(_lost_marked))
    if _append({"k": "note", "pid": os.getpid(), "tid": _tid(), "what": "python-records-lost", "t": now(),
                "lost": n - _lost_said,  # the report's totals.lost: each note counts the losses since the last
                "msg": "%d record%s of the Python framework adapters could not be written (%s): those compiles are "
                       "not in this report" % (n, "" if n == 1 else "s", codes)}):
        _lost_said = n


def write(kind, **fields):
    """One record, now, of one of KINDS. Never raises."""
    if not _DIR or kind not in KINDS:
        return
    try:
        rec = {"k": kind, "pid": os.getpid(), "tid": fields.pop("tid", None) or _tid()}
        rec.update(fields)
        if _append(rec) and _lost > _lost_said:
            _say_lost()
    except Exception:
        pass


def begin():
    """The proc record, at start-up: a Python process of the run without one did not run the hook."""
    if not _DIR:
        return
    try:
        os.close(_open())
    except OSError as e:
        _mark_lost(e.errno or errno.EIO)
    except Exception:
        pass


def at_exit():
    try:
        _say_lost()
    except Exception:
        pass


def note(what, msg):
    """Something the report must say, once per process and kind of trouble."""
    with _lock:
        if what in _noted:
            return
        _noted.add(what)
    write("note", what=what, msg=msg, t=now())


def unit(fw, name, t0, t1, stages=(), cache="", key="", tid=None, **more):
    """A framework's compile of one function, kernel or graph; stages are (name, t0, t1) in
    nanoseconds (t0 None: its start is not known, t1 then its length)."""
    write("unit", fw=fw, name=name, key=key, t0=int(t0), t1=int(t1), cache=cache, tid=tid,
          stages=[[s, None if a is None else int(a), int(b)] for s, a, b in stages], **more)
