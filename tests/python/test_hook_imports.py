"""The start-up hook leaves the import system as the program knows it: its modules' own loaders,
its own sitecustomize (or none), its sys.path; an adapter's trouble never reaches an import; an
interpreter too old for the hook runs the program's sitecustomize and prints nothing of ours."""
import json
import py_compile
import subprocess

import pytest

from hookutil import FAKES, HOOK, env_for, notes, other_python, records, run

LOADERS = r'''
import importlib.machinery, importlib.util, json, sys
sys.path.insert(0, %r)
out = {}
spec = importlib.util.find_spec("triton")          # looked up, not imported
out["find_spec"] = type(spec.loader).__name__
import triton, triton.knobs
out["loader"] = type(triton.__loader__).__name__
out["spec loader is loader"] = triton.__spec__.loader is triton.__loader__
out["source loader"] = isinstance(triton.__loader__, importlib.machinery.SourceFileLoader)
out["resources"] = sorted(triton.__spec__.loader.get_resource_reader("triton").contents())
try:
    import warnings; warnings.simplefilter("ignore")
    import pkg_resources
    out["pkg_resources"] = sorted(pkg_resources.resource_listdir("triton", ""))
except ImportError:
    out["pkg_resources"] = "absent"
print(json.dumps(out))
'''


def test_hook_imports__own_loaders(tmp_path):
    code = LOADERS % str(FAKES)
    r, rec = run(tmp_path, code)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    bare, _ = run(tmp_path, code, records=False, pythonpath=[])
    assert got == json.loads(bare.stdout)
    assert got["find_spec"] == got["loader"] == "SourceFileLoader" and got["source loader"] is True
    assert got["spec loader is loader"] is True
    assert {"__init__.py", "compiler", "knobs.py"} <= set(got["resources"])  # the package's own files, listed
    assert [x["k"] for x in records(rec)] == ["proc"]  # adapted (imported, nothing compiled)


@pytest.mark.parametrize("exc", ["class Boom(BaseException): pass\n", "Boom = SystemExit\n"])
def test_hook_imports__adapter_trouble_stops_at_the_adapter(tmp_path, exc):
    # a framework whose module __getattr__ raises a BaseException when the adapter looks for its API
    pkg = tmp_path / "fw" / "triton"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(exc + "def __getattr__(name):\n    raise Boom(name)\n")
    r, rec = run(tmp_path, "import sys; sys.path.insert(0, 'fw')\nimport triton\nprint('imported', triton.__name__)\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "imported triton\n" and r.stderr == ""
    assert "the triton adapter could not register" in notes(rec)["adapter-triton"]


SITE = r'''
import json, os, sys
out = {"path": [p for p in sys.path if "gpujit" in p or p.endswith("/python")],
       "in sys.modules": "sitecustomize" in sys.modules}
try:
    import sitecustomize
    out["import"] = os.path.relpath(sitecustomize.__file__)
except BaseException as e:
    out["import"] = type(e).__name__ + ": " + str(e)
out["own ran"] = os.environ.get("OWN_RAN", "")
print(json.dumps(out))
'''


@pytest.mark.parametrize("own", [None, "os.environ['OWN_RAN'] = 'yes'\n", "os.environ['OWN_RAN'] = 'half'\n1 / 0\n",
                                 "raise ImportError('quiet', name='sitecustomize')\n"])
def test_hook_imports__sitecustomize_as_without_gpujit(tmp_path, own):
    # with the hook, the program sees what it sees without it: its own sitecustomize (run once),
    # or none at all; a failing one printed as site prints it, and not left importable
    path = []
    if own is not None:
        (tmp_path / "own").mkdir()
        (tmp_path / "own" / "sitecustomize.py").write_text("import os\n" + own)
        path = [str(tmp_path / "own")]
    r, rec = run(tmp_path, SITE, pythonpath=[str(HOOK)] + path)
    bare, _ = run(tmp_path, SITE, pythonpath=path, records=False)
    assert r.returncode == bare.returncode == 0, (r.stderr, bare.stderr)
    assert (r.stdout, r.stderr) == (bare.stdout, bare.stderr)
    got = json.loads(r.stdout)
    if own is None and "Error" in json.loads(bare.stdout)["import"]:  # no sitecustomize anywhere
        assert got["import"].startswith("ModuleNotFoundError: No module named 'sitecustomize'")
        assert got["in sys.modules"] is False
    elif own is None:  # the interpreter's own (Debian's and Ubuntu's Pythons ship one): never gpujit's
        assert "_gpujit" not in got["import"] and not got["import"].startswith(str(HOOK))
    elif "1 / 0" in own:
        assert r.stderr == ("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                            "ZeroDivisionError: division by zero\n")
        assert got["in sys.modules"] is False and got["import"] == "ZeroDivisionError: division by zero"
    elif "ImportError" in own:
        assert r.stderr == "" and got["in sys.modules"] is False
    else:
        assert got["import"] == "own/sitecustomize.py" and got["own ran"] == "yes"
    assert [x["k"] for x in records(rec)] == ["proc"]


def test_hook_imports__hook_directory_not_on_sys_path(tmp_path):
    r, _ = run(tmp_path, "import sys\nprint(%r in sys.path)\n" % str(HOOK))
    assert r.returncode == 0 and r.stdout == "False\n", r.stderr


@pytest.mark.parametrize("names", [("python2.7", "python2"), ("python3.8",), ("python3.7",)])
def test_hook_imports__old_python_silent(tmp_path, names):
    python = other_python(*names)
    if python is None:
        pytest.skip("no %s here" % names[0])
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "sitecustomize.py").write_text("import os\nos.environ['OWN_RAN'] = 'yes'\n")
    code = "import os, json\nprint(os.environ.get('OWN_RAN'))\n"
    r, rec = run(tmp_path, code, python=python, pythonpath=[str(HOOK), str(tmp_path / "own")])
    assert r.stderr == "" and r.stdout == "yes\n" and r.returncode == 0
    # nothing lost without a note: which process ran which Python, and that its frameworks were not seen
    got = records(rec)
    assert [x["k"] for x in got] == ["proc", "note"], got
    assert got[0]["writer"] == "python" and got[0]["pid"] == got[1]["pid"]
    version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                             text=True).stdout.strip()
    assert got[1]["what"] == "python-too-old" and ("runs Python %s;" % version) in got[1]["msg"], got[1]


def test_hook_imports__start_files_are_python2(tmp_path):
    # what an old interpreter reads of the hook parses as Python 2 (and as this Python)
    python2 = other_python("python2.7", "python2")
    for name in ("sitecustomize.py", "usercustomize.py", "_gpujit_site.py"):
        py_compile.compile(str(HOOK / name), cfile=str(tmp_path / (name + "c")), doraise=True)
        if python2:
            r = subprocess.run([python2, "-c", "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')",
                                str(HOOK / name)], capture_output=True, text=True, env=env_for(None, []))
            assert r.returncode == 0, r.stderr
    if python2 is None:
        pytest.skip("no python2 here: parsed as this Python only")
