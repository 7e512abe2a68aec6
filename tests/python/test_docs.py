"""Every code block of the README and docs/ runs as written (in a scratch directory that holds
the repository's examples/, a kernels/ copy of them, k.cu and include/): sh blocks and `$ `
transcripts as shell commands, python blocks with this interpreter, c blocks compiled against the
build tree's library and run, json blocks parsed (unless elided with …). A block that cannot run
here says why in a marker on the line before it, which this test reports as a skip:

    <!-- test: synopsis -->               usage forms, not commands
    <!-- test: gpu -->                    runs only where there is a GPU
    <!-- test: not run: REASON -->        never run here (CI YAML, installing, a remote host)
    <!-- test: setup: SHELL -->           commands run first, unseen by the reader
    <!-- test: run in DIR -->             the block's working directory (examples/, say)
    <!-- test: continues -->              a python block that continues the one before it
    <!-- test: profiled -->               a python block run under `python -m gpujit profile -q --`

Markers combine with "; ". Blocks without a language and without `$ ` lines are output."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import gpujit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DOCS = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
KNOWN = {"synopsis", "gpu", "not run", "setup", "run in", "continues", "profiled"}
FENCE = re.compile(r"^```(\w*)\s*$")
MARK = re.compile(r"^<!-- test: (.*) -->\s*$")


def _blocks():
    out = []
    for doc in DOCS:
        lines = open(os.path.join(ROOT, doc), encoding="utf-8").read().split("\n")
        i, prev_python = 0, None
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            marks, key = {}, None
            mm = MARK.match(lines[i - 1]) if i else None
            for part in (mm.group(1).split("; ") if mm else []):
                k, _, value = part.partition(":")
                if k.strip() in KNOWN or key is None:
                    key = k.strip()
                    marks[key] = value.strip()
                else:  # a "; " inside a value (setup's shell commands)
                    marks[key] += "; " + part
            lang, body = m.group(1), "\n".join(lines[i + 1:j]) + "\n"
            block = {"doc": doc, "line": i + 1, "lang": lang, "body": body, "marks": marks, "before": None}
            if lang == "python":
                if "continues" in marks:
                    block["before"] = prev_python
                prev_python = (prev_python if "continues" in marks else "") + body
            out.append(block)
            i = j + 1
    return out


BLOCKS = _blocks()


def _has_gpu():
    try:
        gpujit.synchronize()
        return True
    except gpujit.GpujitError:
        return False


def _kind(b):
    """What the block is: sh, python, c, json, transcript, or None (output, YAML)."""
    if b["lang"] in ("sh", "python", "c", "json"):
        return b["lang"]
    if not b["lang"] and any(l.startswith("$ ") for l in b["body"].splitlines()):
        return "transcript"
    return None


def _scratch(tmp_path):
    """The directory a block runs in, and its environment: a cache of its own, gpujit on PATH."""
    work = tmp_path / "work"
    shutil.copytree(os.path.join(ROOT, "examples"), work / "examples")
    shutil.copytree(os.path.join(ROOT, "examples"), work / "kernels",
                    ignore=shutil.ignore_patterns("*.json", "lto"))
    shutil.copy(os.path.join(ROOT, "examples", "saxpy.cu"), work / "k.cu")
    (work / "include").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = os.path.join(os.path.dirname(sys.executable), "gpujit")
    wrapper = bin_dir / "gpujit"  # the installed binary, else the package's own entry point
    wrapper.write_text("#!/bin/sh\nexec %s \"$@\"\n" % (exe if os.path.exists(exe) else sys.executable + " -m gpujit"))
    wrapper.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s:%s" % (bin_dir, os.path.dirname(sys.executable), os.environ.get("PATH", "")),
               GPUJIT_CACHE_DIR=str(tmp_path / "cache"), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               PYTHON=sys.executable)
    env.pop("GPUJIT_SERVER", None)
    return work, env


def _run(cmd, cwd, env, what, shell=False, stdin=None):
    r = subprocess.run(cmd, cwd=cwd, env=env, shell=shell, input=stdin, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, "%s exited %d\n--- stdout\n%s\n--- stderr\n%s" % (what, r.returncode, r.stdout[-4000:],
                                                                             r.stderr[-4000:])
    return r


def _transcript(body):
    """The commands of a `$ ` transcript, continuation lines joined."""
    cmds, cur = [], None
    for line in body.splitlines():
        if cur is not None:
            cur += "\n" + line
        elif line.startswith("$ "):
            cur = line[2:]
        else:
            continue
        if not cur.endswith("\\"):
            cmds.append(cur)
            cur = None
    return "\n".join(cmds) + "\n"


def _c(body, cwd, env, tmp_path, what):
    build = os.environ.get("GPUJIT_BUILD_DIR", os.path.join(ROOT, "build"))
    lib = os.path.join(build, "libgpujit.so")
    if not os.path.exists(lib):
        pytest.skip("no libgpujit.so in %s to link a C example against (set GPUJIT_BUILD_DIR)" % build)
    src, exe = tmp_path / "example.c", tmp_path / "example"
    src.write_text(body)
    _run([os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Wextra", "-Werror", str(src), "-I",
          os.path.join(ROOT, "include"), "-L", build, "-lgpujit", "-Wl,-rpath," + build, "-o", str(exe)],
         cwd, env, what + " (compiling)")
    return _run([str(exe)], cwd, env, what)


@pytest.mark.parametrize("b", BLOCKS, ids=["%s:%d" % (b["doc"], b["line"]) for b in BLOCKS])
def test_doc_block(b, tmp_path):
    kind, marks, what = _kind(b), b["marks"], "%s:%d" % (b["doc"], b["line"])
    if b is BLOCKS[0]:
        # The README's two set-up commands are this very run (CI's .ci/run is the second): each is
        # an executable script of the repository, and CI runs the second.
        cmds = [l.split("#")[0].strip() for l in b["body"].splitlines() if l.strip()]
        assert cmds == ["scripts/main.sh", "scripts/test.sh"]
        assert all(os.access(os.path.join(ROOT, c), os.X_OK) for c in cmds)
        assert "exec scripts/test.sh" in open(os.path.join(ROOT, ".ci", "run")).read()
        return
    if kind is None:
        pytest.skip("output or configuration (%s), not commands" % (b["lang"] or "text"))
    if "synopsis" in marks:
        pytest.skip("a usage synopsis, not commands")
    if "not run" in marks:
        pytest.skip("not run: " + marks["not run"])
    if "gpu" in marks and not _has_gpu():
        pytest.skip("needs a GPU")
    if kind == "json":
        if "…" in b["body"]:
            pytest.skip("an elided sketch (…), not a whole document")
        json.loads(b["body"])
        return
    work, env = _scratch(tmp_path)
    if "setup" in marks:
        _run(marks["setup"], work, env, what + " (setup)", shell=True)
    cwd = work / marks["run in"] if "run in" in marks else work
    if kind in ("sh", "transcript"):
        script = "set -e\n" + (_transcript(b["body"]) if kind == "transcript" else b["body"])
        _run(["bash", "-c", script], cwd, env, what)
    elif kind == "python":
        cmd = [sys.executable, "-"]
        if "profiled" in marks:
            cmd = [sys.executable, "-m", "gpujit", "profile", "-q", "--"] + cmd
        _run(cmd, cwd, env, what, stdin=(b["before"] or "") + b["body"])
    elif kind == "c":
        _c(b["body"], cwd, env, tmp_path, what)


def test_every_marker_is_known():
    """A misspelt marker would silently run or skip a block: every key is one of the known."""
    bad = ["%s:%d %s" % (b["doc"], b["line"], k) for b in BLOCKS for k in b["marks"] if k not in KNOWN]
    assert not bad
    assert sum(1 for b in BLOCKS if _kind(b)) >= 20  # the docs' code is found at all
