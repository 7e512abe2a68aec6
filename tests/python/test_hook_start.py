"""What the start-up hook says where it cannot see everything: a proc record in every Python
process it starts in, frameworks imported past its finder adapted late (or said at exit), the hook
started from usercustomize where the program's sitecustomize shadows ours, records lost at exit."""
import errno
import os
import subprocess
import sys

import pytest

from hookutil import FAKES, HOOK, fake_path, notes, records, run


def test_hook_start__proc_record_at_start(tmp_path):
    # a Python process that compiles nothing still says it ran the hook: the report can tell the
    # ones that did not (-I, -E, -S, a shadowing sitecustomize) by its absence
    r, rec = run(tmp_path, "print('nothing compiled')\n", args=("-u",))
    assert r.returncode == 0 and r.stderr == ""
    procs = [x for x in records(rec) if x["k"] == "proc"]
    assert len(procs) == 1
    p = procs[0]
    assert p["writer"] == "python" and p["v"] == 1 and p["pid"] > 0 and p["ppid"] == os.getpid()
    assert p["cmd"].endswith("-u " + str(tmp_path / "prog.py")), p["cmd"]


@pytest.mark.parametrize("how,then", [("replaced", "import fractions"), ("own finder first", "import fractions"),
                                      ("replaced", "open(os.devnull).close()")])
def test_hook_start__past_the_finder_adapted_late(tmp_path, how, then):
    # the program's import system does not ask gpujit's finder: the framework is adapted at the first
    # audited event after its import (the next import, a file opened), which a note says
    change = {"replaced": "sys.meta_path[:] = [f for f in sys.meta_path if 'gpujit' not in type(f).__module__]\n",
              "own finder first": r'''
import importlib.machinery
class Mine:
    def find_spec(self, name, path=None, target=None):
        if name == "triton":
            return importlib.machinery.PathFinder.find_spec(name, [%r])
sys.meta_path.insert(0, Mine())
''' % str(FAKES)}[how]
    r, rec = run(tmp_path, fake_path() + "import os, sys\n" + change + r'''
import triton
%s
triton.compile("k")
print(type(triton.__loader__).__name__)
''' % then)
    assert r.returncode == 0 and r.stdout == "SourceFileLoader\n", r.stderr
    assert [x["name"] for x in records(rec) if x["k"] == "unit"] == ["k"]
    assert notes(rec)["late-triton"].startswith("triton was imported past gpujit's import hook")


def test_hook_start__never_adapted_said_at_exit(tmp_path):
    # imported past the finder, and no import after it: the program exits with it unwatched
    r, rec = run(tmp_path, fake_path() + r'''
import sys
sys.meta_path[:] = [f for f in sys.meta_path if 'gpujit' not in type(f).__module__]
import triton
triton.compile("unseen")
''')
    assert r.returncode == 0, r.stderr
    assert not [x for x in records(rec) if x["k"] == "unit"]
    said = notes(rec)
    # unwatched to the end; or (3.13, whose exit opens or imports) adapted late, after the compile
    if "late-triton" in said:
        assert "compiles before that are not in this report" in said["late-triton"]
    else:
        assert said["unwatched-triton"].startswith(
            "triton was imported past gpujit's import hook (the program's own import hooks) and its adapter never "
            "registered")


def test_hook_start__from_usercustomize_when_shadowed(tmp_path):
    # the program's own sitecustomize first on PYTHONPATH: site runs it, not ours; ours starts from
    # usercustomize (where user site-packages are on), runs the program's usercustomize, and says so
    python = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])  # not a venv's
    if not os.path.exists(python):
        python = sys.executable
    user_site = subprocess.run([python, "-c", "import site; print(site.ENABLE_USER_SITE)"], capture_output=True,
                               text=True, env={"PATH": os.environ.get("PATH", "")}).stdout.strip()
    if user_site != "True":
        pytest.skip("%s runs without user site-packages: usercustomize is never imported" % python)
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "sitecustomize.py").write_text("import os\nos.environ['OWN_SITE'] = 'ran'\n")
    (tmp_path / "later").mkdir()
    (tmp_path / "later" / "usercustomize.py").write_text("import os\nos.environ['OWN_USER'] = 'ran'\n")
    code = fake_path() + r'''
import os, sys
import triton
triton.compile("k")
print(os.environ.get("OWN_SITE"), os.environ.get("OWN_USER"), %r in sys.path,
      sys.modules["usercustomize"].__file__.endswith("later/usercustomize.py"))
''' % str(HOOK)
    r, rec = run(tmp_path, code, python=python,
                 pythonpath=[str(tmp_path / "own"), str(HOOK), str(tmp_path / "later")])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout == "ran ran False True\n"
    assert [x["k"] for x in records(rec)][:1] == ["proc"]
    assert [x["name"] for x in records(rec) if x["k"] == "unit"] == ["k"]
    assert "gpujit's hook started from usercustomize" in notes(rec)["hook-from-usercustomize"]


def test_hook_start__full_disk_said_at_exit(tmp_path):
    r, rec = run(tmp_path, fake_path() + r'''
import errno, os, triton
from _gpujit_profile_hook import _record
real = _record._write
def write(fd, data):
    if b'"k":"unit"' in data:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real(fd, data)
_record._write = write
triton.compile("lost")
''')
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert notes(rec)["python-records-lost"].startswith("1 record of the Python framework adapters could not")
    pid = [x for x in records(rec) if x["k"] == "proc"][0]["pid"]
    assert (rec / ("lost-%d-%d" % (pid, errno.ENOSPC))).exists()
