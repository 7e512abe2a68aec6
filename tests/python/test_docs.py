"""Every code block of the README and docs/ runs as written, and prints what the page shows.

Each block runs in a fresh temporary directory holding what a clone of this repository gives the
reader (examples/) and nothing else, with a home directory of its own (so the default kernel
cache starts empty), no GPUJIT_* variable set, and the installed `gpujit` on PATH: sh blocks and
`$ ` transcripts as shell commands, python blocks with this interpreter, c blocks compiled
against the build tree's library and run, json blocks parsed (unless elided with …).

What a block prints is compared with what the page shows: a transcript's lines after each `$ `
command, and the output block that directly follows an sh, python or c block (blank lines
between them, nothing else). Both sides are normalised first: the scratch directory reads as the
clone at /home/you/gpujit and its home as /home/you, a decimal number (a time, a size) and an
integer before a unit of time or size as # (in a gpu block's output every number: it was
measured on another GPU), runs of spaces as one. In the shown text, `…` stands
for any text on its line, and a line of `…` alone for any lines. A block that cannot run here
says why in a marker on the line before it, which this test reports as a skip:

    <!-- test: synopsis -->               usage forms, not commands
    <!-- test: gpu -->                    runs only where there is a GPU
    <!-- test: not run: REASON -->        never run here (CI YAML, installing, a remote host)
    <!-- test: setup: SHELL -->           commands run first, unseen by the reader
    <!-- test: run in: DIR -->            the block's working directory (examples/, say)
    <!-- test: continues -->              a python block that continues the one before it
    <!-- test: profiled -->               a python block run under `python -m gpujit profile -q --`
    <!-- test: output not compared: REASON -->   runs, but what it prints differs by machine
    <!-- test: without a GPU: SHOWN => PRINTED -->  the page shows a GPU machine's output; on a
                                          machine without one, the shown lines SHOWN (a run of
                                          whole lines, as the page writes them, separated by
                                          " | ") read PRINTED (lines the same way) instead

Markers combine with "; ". Blocks without a language and without `$ ` lines are output."""
import glob
import json
import os
import re
import shutil
import pathlib
import subprocess
import sys
import tempfile

import pytest

import gpujit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DOCS = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
KNOWN = {"synopsis", "gpu", "not run", "setup", "run in", "continues", "profiled", "output not compared",
         "without a GPU"}
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
            block = {"doc": doc, "line": i + 1, "lang": lang, "body": body, "marks": marks, "before": None,
                     "shown": None}
            prev = out[-1] if out else None
            if (prev and not lang and not mm and not any(l.startswith("$ ") for l in body.splitlines()) and
                    prev["lang"] in ("sh", "python", "c") and prev["end"] + 1 <= i and
                    all(not l.strip() for l in lines[prev["end"] + 1:i])):
                prev["shown"] = body  # the output the page shows for the block above
            block["end"] = j
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


def _scratch(tmp_path, request):
    """The directory a block runs in (a clone's examples/, nothing else), and its environment: a
    home of its own, no GPUJIT_* setting, gpujit on PATH. The directory's path is short, as a
    clone's often is: a report's 40-column module names show it whole, to be read as the page's."""
    short = tempfile.mkdtemp(prefix="gj", dir="/tmp")
    request.addfinalizer(lambda: shutil.rmtree(short, ignore_errors=True))
    work, home = pathlib.Path(short) / "work", tmp_path / "home"
    shutil.copytree(os.path.join(ROOT, "examples"), work / "examples")
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = os.path.join(os.path.dirname(sys.executable), "gpujit")
    wrapper = bin_dir / "gpujit"  # the installed binary, else the package's own entry point
    wrapper.write_text("#!/bin/sh\nexec %s \"$@\"\n" % (exe if os.path.exists(exe) else sys.executable + " -m gpujit"))
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUJIT_") and k not in ("XDG_CACHE_HOME",)}
    env.update(PATH="%s:%s:%s" % (bin_dir, os.path.dirname(sys.executable), os.environ.get("PATH", "")),
               HOME=str(home), PYTHON=sys.executable)
    return work, env


def _run(cmd, cwd, env, what, shell=False, stdin=None, merged=False):
    """Run it; exit 0 or the test fails. merged: stderr into stdout, as a terminal shows both."""
    r = subprocess.run(cmd, cwd=cwd, env=env, shell=shell, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT if merged else subprocess.PIPE, text=True, timeout=600)
    assert r.returncode == 0, "%s exited %d\n--- stdout\n%s\n--- stderr\n%s" % (what, r.returncode, r.stdout[-4000:],
                                                                             (r.stderr or "")[-4000:])
    return r


def _transcript(body):
    """The commands of a `$ ` transcript, continuation lines joined, and the output it shows (the
    lines that are no command)."""
    cmds, shown, cur = [], [], None
    for line in body.splitlines():
        if cur is not None:
            cur += "\n" + line
        elif line.startswith("$ "):
            cur = line[2:]
        else:
            shown.append(line)
            continue
        if not cur.endswith("\\"):
            cmds.append(cur)
            cur = None
    return "\n".join(cmds) + "\n", "\n".join(shown) + "\n"


UNIT = r"(?:ms|µs|us|ns|s|B|KiB|MiB|GiB|kB|MB|GB|KB|x|×)\b"


def _normal(text, places, every_number=False):
    """Text as compared: the scratch's paths as the page's, times and sizes as # (every number,
    with every_number: a GPU's measures — registers, launches to break even — vary by device),
    runs of spaces as one, no trailing spaces, no blank lines at either end."""
    for real, shown in places:
        text = text.replace(real, shown)
    text = re.sub(r"\d+\.\d+", "#", text)
    if every_number:
        text = re.sub(r"\d+", "#", text)
    text = re.sub(r"\b\d+(?= ?%s)" % UNIT, "#", text)
    lines = [re.sub(r"[ \t]+", " ", l).rstrip() for l in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _matches(shown, actual):
    """Whether the actual lines are the shown ones, where `…` is any text and a `…` line any lines."""
    pattern = []
    for line in shown:
        if line.strip() == "…":
            pattern.append(r"(?:[^\n]*\n)*?")
        else:
            pattern.append(".*?".join(re.escape(part) for part in line.split("…")) + r"\n")
    return re.fullmatch("".join(pattern), "".join(l + "\n" for l in actual)) is not None


def _without_gpu(shown, spec, what):
    """The shown output as a machine without a GPU prints it: the run of shown lines `spec` names
    (before " => ", " | " between lines; each as the page writes it, leading spaces aside) in
    place of the lines after it. A run that is not there exactly once is a stale marker: it fails."""
    old, sep, new = spec.partition(" => ")
    assert sep, "%s: 'without a GPU' needs SHOWN => PRINTED, not %r" % (what, spec)
    old, new = [l.strip() for l in old.split(" | ")], [l.strip() for l in new.split(" | ")]
    lines = shown.split("\n")
    at = [i for i in range(len(lines)) if [l.strip() for l in lines[i:i + len(old)]] == old]
    assert len(at) == 1, "%s: 'without a GPU' names lines the page shows %d times, not once: %r" % (what, len(at), old)
    i = at[0]
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    return "\n".join(lines[:i] + [indent + l for l in new] + lines[i + len(old):])


def _compare(b, printed, work, env, what):
    """The block's printed output against what the page shows for it (on a machine without a
    GPU, with the lines its `without a GPU` marker declares for one)."""
    shown = b["shown"]
    if shown is None or "output not compared" in b["marks"]:
        return
    if "without a GPU" in b["marks"] and not _has_gpu():
        shown = _without_gpu(shown, b["marks"]["without a GPU"], what)
    places = [(str(work), "/home/you/gpujit"), (env["HOME"], "/home/you")]
    gpu = "gpu" in b["marks"]
    want, got = _normal(shown, [], gpu), _normal(printed, places, gpu)
    assert _matches(want, got), ("%s prints other than the page shows (after normalising; left: shown, right: printed)\n%s"
                                 % (what, "\n".join("%-60s | %s" % (a[:60], c) for a, c in
                                                     __import__("itertools").zip_longest(want, got, fillvalue=""))))


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
    return _run([str(exe)], cwd, env, what, merged=True)


@pytest.mark.parametrize("b", BLOCKS, ids=["%s:%d" % (b["doc"], b["line"]) for b in BLOCKS])
def test_doc_block(b, tmp_path, request):
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
    work, env = _scratch(tmp_path, request)
    if "gpujit server start" in b["body"]:  # a block that fails before its `server stop` leaves none running
        request.addfinalizer(lambda: subprocess.run(["gpujit", "server", "stop"], cwd=work, env=env, capture_output=True))
    if "setup" in marks:
        _run(marks["setup"], work, env, what + " (setup)", shell=True)
    cwd = work / marks["run in"] if "run in" in marks else work
    if kind in ("sh", "transcript"):
        if kind == "transcript":
            commands, b = _transcript(b["body"]), dict(b)
            b["body"], b["shown"] = commands
        r = _run(["bash", "-c", "set -e\n" + b["body"]], cwd, env, what, merged=True)
    elif kind == "python":
        cmd = [sys.executable, "-"]
        if "profiled" in marks:
            cmd = [sys.executable, "-m", "gpujit", "profile", "-q", "--"] + cmd
        r = _run(cmd, cwd, env, what, stdin=(b["before"] or "") + b["body"], merged=True)
    else:
        r = _c(b["body"], cwd, env, tmp_path, what)
    _compare(b, r.stdout, work, env, what)


def test_every_marker_is_known():
    """A misspelt marker would silently run or skip a block: every key is one of the known."""
    bad = ["%s:%d %s" % (b["doc"], b["line"], k) for b in BLOCKS for k in b["marks"] if k not in KNOWN]
    assert not bad
    assert sum(1 for b in BLOCKS if _kind(b)) >= 20  # the docs' code is found at all


def test_printed_output_is_compared_with_the_shown():
    """The comparison is real: times, sizes and the scratch's paths are free, counts and words are
    not, and `…` stands for text (in a line) or lines (alone)."""
    places = [("/tmp/gjX/work", "/home/you/gpujit")]
    shown = _normal("  JIT compile 107.0 ms in 2 compiles\n  /home/you/gpujit/examples/v.cu  70.4\n", [])
    assert _matches(shown, _normal("  JIT compile 315.0 ms in 2 compiles\n  /tmp/gjX/work/examples/v.cu   315.0\n", places))
    assert not _matches(shown, _normal("  JIT compile 315.0 ms in 1 compile\n  /tmp/gjX/work/examples/v.cu  1.0\n", places))
    assert not _matches(shown, _normal("  JIT compile 1.0 ms in 2 compiles\n", places))  # a line missing
    assert _matches(_normal("a\n…\nz …\n", []), _normal("a\nb\nc\nz and more\n", []))
    assert not _matches(_normal("a\n…\nz\n", []), _normal("a\nb\n", []))
    shows = lambda b: b["shown"] is not None or (_kind(b) == "transcript" and _transcript(b["body"])[1].strip())
    compared = [b["line"] for b in BLOCKS if b["doc"] == "README.md" and shows(b) and
                not {"output not compared", "gpu", "not run", "synopsis"} & set(b["marks"])]
    assert len(compared) >= 5, compared  # the quick start's build, python and profile; trace; ncu


def test_without_a_gpu_replaces_exactly_the_lines_it_names():
    """A `without a GPU` marker swaps a run of whole shown lines for others, and nothing else: the
    lines around them are compared as before, and a run the page does not show once fails."""
    shown = "a\n  GPU: 1 ran\n  GPU 0: 3 launches\nz\n"
    got = _without_gpu(shown, "GPU: 1 ran | GPU 0: 3 launches => GPU: not recorded (why)", "t")
    assert got == "a\n  GPU: not recorded (why)\nz\n"
    assert _matches(_normal(got, []), _normal("a\n  GPU: not recorded (why)\nz\n", []))
    assert not _matches(_normal(got, []), _normal("a\n  GPU: not recorded (why)\nextra\nz\n", []))
    for stale in ("GPU: 2 ran => x", "GPU 0: 3 launches | GPU: 1 ran => x", "GPU: 1 ran"):
        with pytest.raises(AssertionError):
            _without_gpu(shown, stale, "t")
    readme = [b for b in BLOCKS if "without a GPU" in b["marks"]]
    assert readme, "no block declares what a machine without a GPU prints"
    for b in readme:  # each names lines its page shows, once
        _without_gpu(b["shown"], b["marks"]["without a GPU"], "%s:%d" % (b["doc"], b["line"]))


def test_what_the_docs_make_in_a_clone_is_ignored():
    """A clone that ran the README's CI block holds its cache (.gpujit-cache/) and outputs: git
    ignores them, so `git status` stays clean."""
    if not os.path.isdir(os.path.join(ROOT, ".git")) and not os.path.isfile(os.path.join(ROOT, ".git")):
        pytest.skip("not a git checkout")
    made = [".gpujit-cache/v1/entry", "examples/saxpy.cubin", "block_reduce.trace.json"]
    r = subprocess.run(["git", "check-ignore", "--no-index"] + made, cwd=ROOT, capture_output=True, text=True)
    assert r.stdout.split() == made, r.stdout + r.stderr
    assert any('GPUJIT_CACHE_DIR="$PWD/.gpujit-cache"' in b["body"] for b in BLOCKS if b["doc"] == "README.md")


def test_the_docs_index_lists_every_page():
    """docs/README.md links every page of docs/ (and nothing that is not there)."""
    index = open(os.path.join(ROOT, "docs", "README.md"), encoding="utf-8").read()
    links = set(re.findall(r"\]\(([^)#]+)\)", index))
    pages = {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "docs", "*.md"))} - {"README.md"}
    assert pages - links == set(), "pages the index does not list: %s" % sorted(pages - links)
    assert all(os.path.exists(os.path.normpath(os.path.join(ROOT, "docs", l))) for l in links), links
