"""Records of the framework adapters: one JSON-lines file per process, in the format of
docs/record-format.md, written as the injection library writes its own (each line one append)."""
import json
import os
import sys
import threading
import time

_DIR = os.environ.get("GPUJIT_PROFILE_DIR") or ""
_lock = threading.Lock()
_fd = -1
_fd_pid = 0
_noted = set()


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


def _open():
    """This process's file (a forked child opens its own), its proc record first."""
    global _fd, _fd_pid
    pid = os.getpid()
    if _fd >= 0 and _fd_pid == pid:
        return _fd
    t = now()
    fd = os.open(os.path.join(_DIR, "p%d-%d.jsonl" % (pid, t)), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
                 0o600)
    _fd, _fd_pid = fd, pid
    ppid = os.getppid()
    _write_line({"k": "proc", "v": 1, "pid": pid, "tid": _tid(), "ppid": ppid, "ancestors": _ancestors(ppid),
                 "writer": "python", "exe": sys.executable or "", "cmd": " ".join(sys.argv)[:2000], "t": t})
    return fd


def _write_line(rec):
    os.write(_fd, (json.dumps(rec, separators=(",", ":")) + "\n").encode("utf-8", "replace"))


def write(kind, **fields):
    """One record, now. Never raises."""
    if not _DIR:
        return
    try:
        with _lock:
            _open()
            rec = {"k": kind, "pid": os.getpid(), "tid": fields.pop("tid", None) or _tid()}
            rec.update(fields)
            _write_line(rec)
    except Exception:
        pass


def note(what, msg):
    """Something the report must say, once per process and kind of trouble."""
    if what in _noted:
        return
    _noted.add(what)
    write("note", what=what, msg=msg, t=now())


def unit(fw, name, t0, t1, stages=(), cache="", key="", tid=None, **more):
    """A framework's compile of one function, kernel or graph; stages are (name, t0, t1) in
    nanoseconds (t0 None: its start is not known, t1 then its length)."""
    write("unit", fw=fw, name=name, key=key, t0=int(t0), t1=int(t1), cache=cache, tid=tid,
          stages=[[s, None if a is None else int(a), int(b)] for s, a, b in stages], **more)
