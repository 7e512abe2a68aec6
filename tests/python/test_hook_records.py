"""The start-up hook's records (src/inject/python/_gpujit_profile_hook/_record.py) inside programs
that close descriptors, fork while threads record, or fill the disk: nothing goes into the
program's files, no child hangs, and nothing is lost without a note."""
import errno

import pytest

from hookutil import fake_path, notes, records, run

COMPILE_THEN_CLOSE = fake_path() + r'''
import os, sys, triton
triton.compile("before")
%s
fd = os.open("out.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
triton.compile("after")
os.close(fd)
print("fd", fd)
'''


@pytest.mark.parametrize("how", ["os.closerange(3, 1000)",
                                 "keep = os.open(os.devnull, os.O_RDONLY)\nfor n in range(3, 64): os.dup2(keep, n)\n"
                                 "os.closerange(3, 1000)"])
def test_hook_records__not_into_the_programs_file(tmp_path, how):
    r, rec = run(tmp_path, COMPILE_THEN_CLOSE % how)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    # the program's file got the lowest free number, the one the records file had before
    assert (tmp_path / "out.txt").read_bytes() == b""
    units = [x["name"] for x in records(rec) if x["k"] == "unit"]
    assert units == ["before", "after"]


def test_hook_records__file_replaced_by_the_program(tmp_path):
    # the program empties the records directory (its file, by name) and puts another file there
    r, rec = run(tmp_path, fake_path() + r'''
import glob, os, triton
triton.compile("first")
for f in glob.glob(os.environ["GPUJIT_PROFILE_DIR"] + "/p*.jsonl"):
    os.unlink(f)
    open(f, "w").write("the program's\n")
triton.compile("second")
''')
    assert r.returncode == 0, r.stderr
    files = {}
    for x in records_or_text(rec):
        files.setdefault(x[0], []).append(x[1])
    theirs = [f for f, lines in files.items() if lines == ["the program's"]]
    assert len(theirs) == 1  # left as the program wrote it
    ours = [lines for f, lines in files.items() if f not in theirs]
    assert len(ours) == 1 and ours[0][0].startswith('{"k":"proc"') and '"name":"second"' in ours[0][-1]


def records_or_text(directory):
    for f in sorted(directory.glob("p*.jsonl")):
        for line in f.read_text().splitlines():
            yield f.name, line


FORKS = fake_path() + r'''
import os, sys, threading, time
sys.path.insert(0, %r)
from _gpujit_profile_hook import _record
stop = False
def records():
    n = 0
    while not stop:
        _record.write("note", what="t%%d" %% n, msg="from a thread", t=0)
        n += 1
%s
pids = []
for i in range(%d):
    pid = os.fork()
    if pid == 0:
        _record.note("child", "a forked child records")
        os._exit(0)
    pids.append(pid)
stop = True
deadline, hung = time.time() + 10, []
for pid in pids:
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done or time.time() > deadline:
            break
        time.sleep(0.002)
    if not done:
        hung.append(pid)
        os.kill(pid, 9)
        os.waitpid(pid, 0)
print("hung", len(hung), "of", len(pids))
'''


def test_hook_records__fork_while_a_thread_holds_the_lock(tmp_path):
    # the lock that makes the records file, held by another thread at the moment of the fork
    held = r'''
ready = threading.Event()
def holds():
    with _record._lock:
        ready.set()
        while not stop:
            time.sleep(0.001)
threading.Thread(target=holds, daemon=True).start()
ready.wait()
'''
    from hookutil import HOOK
    r, rec = run(tmp_path, FORKS % (str(HOOK), held, 5), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "hung 0 of 5" in r.stdout, r.stdout
    child = [x for x in records(rec) if x["k"] == "note" and x["what"] == "child"]
    assert len(child) == 5 and len({x["pid"] for x in child}) == 5


def test_hook_records__fork_while_a_thread_records(tmp_path):
    from hookutil import HOOK
    r, rec = run(tmp_path, FORKS % (str(HOOK), "threading.Thread(target=records, daemon=True).start()", 200),
                 timeout=60)
    assert r.returncode == 0, r.stderr
    assert "hung 0 of 200" in r.stdout, r.stdout
    assert len([x for x in records(rec) if x["k"] == "note" and x["what"] == "child"]) == 200


def test_hook_records__full_disk_counted_and_said(tmp_path):
    # the hook's one write fails as on a full disk for two records, then space is back
    r, rec = run(tmp_path, fake_path() + r'''
import errno, os, triton
from _gpujit_profile_hook import _record
real, failing = _record._write, [2]
def write(fd, data):
    if failing[0] > 0 and b'"k":"unit"' in data:
        failing[0] -= 1
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real(fd, data)
_record._write = write
triton.compile("lost1")
triton.compile("lost2")
print("the program goes on")
triton.compile("kept")
''')
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" and "the program goes on" in r.stdout
    assert [x["name"] for x in records(rec) if x["k"] == "unit"] == ["kept"]
    assert (rec / ("lost-%d-%d" % (records(rec)[0]["pid"], errno.ENOSPC))).exists()
    msg = notes(rec)["python-records-lost"]
    assert msg.startswith("2 records of the Python framework adapters could not be written (ENOSPC)")
    assert [x["lost"] for x in records(rec) if x["k"] == "note" and x["what"] == "python-records-lost"] == [2]


def test_hook_records__no_records_without_the_directory(tmp_path):
    r, rec = run(tmp_path, fake_path() + "import triton\ntriton.compile('k')\n", records=False)
    assert r.returncode == 0 and r.stderr == ""
    assert list(rec.iterdir()) == []
