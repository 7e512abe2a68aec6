"""Running a Python program with gpujit's start-up hook as `gpujit profile` gives it (the hook's
directory first on PYTHONPATH, GPUJIT_PROFILE_DIR set), from the source tree: no build needed."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
HOOK = ROOT / "src" / "inject" / "python"
FAKES = pathlib.Path(__file__).resolve().parent / "hook_fakes"


def env_for(records, pythonpath=None, extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUJIT_", "PYTHON"))}
    env["PYTHONPATH"] = os.pathsep.join(pythonpath if pythonpath is not None else [str(HOOK)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # Python 2 would write .pyc files beside the hook's sources
    if records is not None:
        env["GPUJIT_PROFILE_DIR"] = str(records)
    env.update(extra or {})
    return env


def run(tmp_path, code, pythonpath=None, python=None, args=(), records=True, timeout=60, extra_env=None):
    """Runs `code` as prog.py in tmp_path; returns (completed process, records directory)."""
    rec = tmp_path / "records"
    rec.mkdir(exist_ok=True)
    prog = tmp_path / "prog.py"
    prog.write_text(code)
    r = subprocess.run([python or sys.executable, *args, str(prog)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=timeout, env=env_for(rec if records else None, pythonpath, extra_env))
    return r, rec


def records(directory):
    """Every record of every p*.jsonl file, each with the file it came from ('file')."""
    out = []
    for f in sorted(pathlib.Path(directory).glob("p*.jsonl")):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            rec["file"] = f.name
            out.append(rec)
    return out


def notes(directory):
    return {r["what"]: r["msg"] for r in records(directory) if r["k"] == "note"}


def fake_path():
    """sys.path line that puts the stand-in frameworks first."""
    return "import sys; sys.path.insert(0, %r)\n" % str(FAKES)


def other_python(*names):
    """An interpreter other than this one (PATH, then pyenv's versions), or None."""
    for name in names:
        found = shutil.which(name)
        if found and subprocess.run([found, "-c", "pass"], capture_output=True).returncode == 0:
            return found
    pyenv = pathlib.Path(os.environ.get("PYENV_ROOT", pathlib.Path.home() / ".pyenv")) / "versions"
    for name in names:
        for exe in sorted(pyenv.glob(name.replace("python", "") + "*/bin/python")):
            return str(exe)
    return None
