#!/usr/bin/env python3
"""Keeps src/ layered as docs/architecture.md says.

Checks, and prints every violation found before failing:
  1. each #include under src/ reaches only the file's own folder, a folder its row of the
     dependency table allows, or a public header (cli/: public headers and cli/ only);
  2. no two files (a .c with its .h) reach each other through includes, directly or round a loop;
  3. with --objects: each object file's undefined symbols are defined in an allowed folder, no
     two object files call each other round a loop, only module/stage.c opens and closes
     trace spans, and the CLI's objects use public symbols only (no gpujit__*);
  4. no file under src/ is over 600 lines;
  5. no function under src/ or python/src is over MAX_FUNCTION_LINES lines (from the line of its
     name to its closing brace) or of cyclomatic complexity over MAX_FUNCTION_CCN (McCabe's: 1, and
     1 for each if, for, while, case, &&, || and ?) — the lengths lizard reports, and complexities
     at or a little above its (it misses some &&); functions in PENDING may stay over until split,
     each printed on every run, and may not grow;
  6. the wings that live outside the library — the injection library (src/inject, with
     --inject-objects: its object files) and the Python extension (python/src, with --python) —
     keep the same rules: no file over 600 lines, no two files reaching each other through
     includes or calls, round a loop; the injection library uses nothing else of gpujit
     (no gpujit_ or gpujit__ symbol), the extension the public API only (no gpujit__ symbol,
     public headers and its own files only).
  7. what keeps the sources readable: no doc comment stacked on another (one of them describes
     nothing), no run of blank lines, every src/**/*.c named in its folder's row of
     docs/architecture.md's Folders table, and every header guard naming its header's path
     (src/cache/store/files.h: GPUJIT_CACHE_STORE_FILES_H).
--self-test plants each kind of violation in a scratch tree and checks that it is caught.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_LINES = 600
NEWLINE = "\n"
# Stage spans are opened and closed in one place: the build pipeline's stage helper.
SPAN_OWNER = "module/stage.c"
SPAN_SYMBOLS = {"gpujit_trace_span_begin", "gpujit_trace_span_end"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# A row of the table: a folder of src/, or a sub-folder of one (compile/toolkit).
FOLDER = r"[a-z_]+(?:/[a-z_]+)?"


# A function longer or more branched than this is split into its steps (docs/architecture.md,
# "Functions").
MAX_FUNCTION_LINES = 120
MAX_FUNCTION_CCN = 40
# Functions over the limits whose split is pending, each with its figures when it was listed:
# reported on every run (never silently), an error if one grows or is no longer over, so the list
# only shrinks. Key: (path under the repository, function).
PENDING = {
    # the profile's own, being rewritten (issue 47 lists them for that work)
}


def parse_table(doc_path):
    """The dependency table: rows whose first cell is `folder` and second a list or a dash."""
    allowed = {}
    public_only = set()
    in_deps = False
    with open(doc_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_deps = line.strip() == "## Dependencies"
                continue
            if not in_deps or not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 2:
                continue
            m = re.fullmatch(r"`(%s)`" % FOLDER, cells[0])
            if not m:
                continue
            folder = m.group(1)
            if "public headers only" in cells[1]:
                public_only.add(folder)
                allowed[folder] = set()
            else:
                allowed[folder] = set(re.findall(r"`(%s)`" % FOLDER, cells[1]))
    if not allowed:
        raise SystemExit(f"{doc_path}: no dependency table under '## Dependencies'")
    # A folder split into sub-folders (compile/toolkit, compile/nvrtc, ...) is named whole in
    # the rows of the folders above it: `compile` there means every compile/* row.
    for folder, uses in allowed.items():
        for group in [u for u in uses if u not in allowed]:
            members = {f for f in allowed if f.startswith(group + "/")}
            if members:
                uses.discard(group)
                uses.update(members)
    for folder, uses in allowed.items():
        unknown = uses - set(allowed)
        if unknown:
            raise SystemExit(f"{doc_path}: row '{folder}' names unknown folders {sorted(unknown)}")
    cycle = find_cycle({k: set(v) for k, v in allowed.items()})
    if cycle:
        raise SystemExit(f"{doc_path}: the table itself has a loop: {' -> '.join(cycle)}")
    return allowed, public_only


def find_cycle(graph):
    """One cycle of a directed graph as a list of nodes, or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def folder_of(rel, allowed):
    """The table's row a path under src/ belongs to: its sub-folder where the table has a row
    for it (compile/toolkit/toolkit.c -> compile/toolkit), else its first folder."""
    parts = rel.replace(os.sep, "/").split("/")
    if len(parts) > 2 and f"{parts[0]}/{parts[1]}" in allowed:
        return f"{parts[0]}/{parts[1]}"
    return parts[0]


def unit(path):
    """A .c and its .h are one unit: src/cache/store/store.c and store.h -> cache/store/store."""
    return os.path.splitext(path)[0]


def check_sources(src, allowed, public_only):
    errors = []
    graph = collections.defaultdict(set)
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            parts = rel.split(os.sep)
            if len(parts) < 2:
                errors.append(f"src/{rel}: files belong in a folder of the table, not directly in src/")
                continue
            folder = folder_of(rel, allowed)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            lines = text.count("\n")
            if lines > MAX_LINES:
                errors.append(f"src/{rel}: {lines} lines (at most {MAX_LINES}): split it by responsibility")
            if folder not in allowed:
                errors.append(f"src/{rel}: folder '{folder}' is not in docs/architecture.md's table")
                continue
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                lineno = text.count("\n", 0, m.start()) + 1
                where = f"src/{rel}:{lineno}"
                if inc == "gpujit.h" or inc.startswith("gpujit/"):
                    continue
                if "/" not in inc:
                    if os.path.exists(os.path.join(root, inc)):
                        if folder not in public_only:
                            errors.append(f'{where}: #include "{inc}": name internal headers by folder '
                                          f'("{folder}/{inc}")')
                        graph[unit(rel)].add(unit(os.path.join(folder, inc)))
                    else:
                        errors.append(f'{where}: #include "{inc}": no such header beside the file')
                    continue
                target = folder_of(inc, allowed)
                if folder in public_only:
                    errors.append(f'{where}: #include "{inc}": {folder}/ uses the public headers only')
                elif target not in allowed:
                    errors.append(f'{where}: #include "{inc}": no folder "{target}" in the table')
                elif target != folder and target not in allowed[folder]:
                    errors.append(f'{where}: #include "{inc}": {folder}/ may not use {target}/ '
                                  f"(allowed: {', '.join(sorted(allowed[folder])) or 'nothing'})")
                elif not os.path.exists(os.path.join(src, inc)):
                    errors.append(f'{where}: #include "{inc}": no such file under src/')
                else:
                    graph[unit(rel)].add(unit(inc))
    for n in list(graph):
        graph[n].discard(n)
    cycle = find_cycle(graph)
    if cycle:
        errors.append("files include each other round a loop: " + " -> ".join(cycle))
    return errors


def nm(path, flag):
    out = subprocess.run(["nm", flag, path], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if flag == "--undefined-only" and len(parts) >= 2:
            syms.append(parts[-1])
        elif flag == "--defined-only" and len(parts) >= 3 and parts[1].isupper():
            syms.append(parts[2])
    return syms


def objects_under(d):
    for root, _, files in os.walk(d):
        for name in sorted(files):
            if name.endswith(".o"):
                path = os.path.join(root, name)
                # CMake names objects src/<folder>/<file>.c.o under the target's directory.
                rel = os.path.relpath(path, d)
                yield path, rel[:-len(".o")] if rel.endswith(".o") else rel


TOKEN = re.compile(r"[A-Za-z_]\w*|&&|\|\||[{}()?;]")
CONDITIONS = {"if", "for", "while", "case", "&&", "||", "?"}


def blank(text):
    """C text with its comments, string and character literals and preprocessor lines blanked
    (newlines kept, so line numbers hold)."""
    out, i, n, line_start = [], 0, len(text), True
    spaces = lambda t: re.sub(r"[^\n]", " ", t)
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a directive, with its continuations and comments
            j = i
            while j < n and text[j] != "\n":
                if text.startswith("\\\n", j):
                    j += 2
                elif text.startswith("/*", j):
                    k = text.find("*/", j + 2)
                    j = n if k < 0 else k + 2
                else:
                    j += 1
            out.append(spaces(text[i:j]))
            i = j
            continue
        line_start = c == "\n"
        if text.startswith("//", i) or text.startswith("/*", i):
            j = text.find("\n" if text[i + 1] == "/" else "*/", i + 2)
            j = n if j < 0 else j + (0 if text[i + 1] == "/" else 2)
            out.append(spaces(text[i:j]))
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + spaces(text[i + 1:j - 1]) + c if j - i >= 2 else text[i:j])
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(text):
    """(name, line of the name, lines, cyclomatic complexity) of each function a C file defines:
    a brace at file scope right after the parenthesis closing the parameters of a name."""
    code = blank(text)
    toks = [(m.group(0), m.start()) for m in TOKEN.finditer(code)]
    found, depth, i = [], 0, 0
    while i < len(toks):
        tok = toks[i][0]
        if tok == "{" and depth == 0 and i > 0 and toks[i - 1][0] == ")":
            j, paren = i - 1, 0
            while j >= 0:
                paren += {")": 1, "(": -1}.get(toks[j][0], 0)
                if paren == 0:
                    break
                j -= 1
            if j >= 1 and re.match(r"[A-Za-z_]", toks[j - 1][0]) and toks[j - 1][0] not in CONDITIONS:
                k, d, ccn = i, 0, 1
                while k < len(toks):
                    t = toks[k][0]
                    d += {"{": 1, "}": -1}.get(t, 0)
                    if d == 0:
                        break
                    ccn += t in CONDITIONS
                    k += 1
                first = code.count("\n", 0, toks[j - 1][1]) + 1
                last = code.count("\n", 0, toks[min(k, len(toks) - 1)][1]) + 1
                found.append((toks[j - 1][0], first, last - first + 1, ccn))
                i = k + 1
                continue
        depth = max(depth + {"{": 1, "}": -1}.get(tok, 0), 0)
        i += 1
    return found


def check_functions(root, dirs, pending):
    """Every function of the .c and .h files under root/<dir> within the limits, or pending."""
    errors, notes, seen = [], [], set()
    for top in dirs:
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for fn, line, lines, ccn in functions(text):
                    key = (rel, fn)
                    over = lines > MAX_FUNCTION_LINES or ccn > MAX_FUNCTION_CCN
                    figures = f"{lines} lines, complexity {ccn}"
                    if key in pending:
                        seen.add(key)
                        was_lines, was_ccn = pending[key]
                        if not over:
                            errors.append(f"{rel}:{line}: {fn} is within the limits now ({figures}): "
                                          "take it out of PENDING in tests/layers/check_layers.py")
                        elif lines > was_lines or ccn > was_ccn:
                            errors.append(f"{rel}:{line}: {fn} grew to {figures} (listed at {was_lines} "
                                          f"lines, complexity {was_ccn}) while its split is pending")
                        else:
                            notes.append(f"{rel}:{line}: {fn}: {figures} (at most {MAX_FUNCTION_LINES} "
                                         f"and {MAX_FUNCTION_CCN}): split pending")
                    elif over:
                        errors.append(f"{rel}:{line}: {fn}: {figures} (at most {MAX_FUNCTION_LINES} lines "
                                      f"and complexity {MAX_FUNCTION_CCN}): split it into its steps")
    for key in sorted(set(pending) - seen):
        if any(key[0].startswith(top + "/") for top in dirs):
            errors.append(f"{key[0]}: no function {key[1]} (PENDING names it): take it out of PENDING")
    return errors, notes


def check_objects(src, obj_dir, cli_dir, allowed, public_only):
    errors = []
    defined = {}
    # Objects of sources that no longer exist are left over from an older build: not ours.
    objs = [(p, r) for p, r in objects_under(obj_dir) if os.path.exists(os.path.join(src, r))]
    if not objs:
        return [f"{obj_dir}: no object files (build the library first)"]
    for path, rel in objs:
        for s in nm(path, "--defined-only"):
            defined[s] = rel
    graph = collections.defaultdict(set)
    for path, rel in objs:
        folder = folder_of(rel, allowed)
        for s in nm(path, "--undefined-only"):
            owner = defined.get(s)
            if not owner or owner == rel:
                continue
            if s in SPAN_SYMBOLS and rel != SPAN_OWNER:
                errors.append(f"src/{rel}: calls {s}: stage spans are opened and closed in {SPAN_OWNER} only")
            target = folder_of(owner, allowed)
            if target != folder and target not in allowed.get(folder, set()):
                errors.append(f"src/{rel}: calls {s} of src/{owner}: {folder}/ may not use {target}/")
            graph[unit(rel)].add(unit(owner))
    cycle = find_cycle(graph)
    if cycle:
        errors.append("object files call each other round a loop: " + " -> ".join(cycle))
    if cli_dir:
        cli_objs = [(p, r) for p, r in objects_under(cli_dir)
                    if os.path.exists(os.path.join(src, "cli", r))]
        if not cli_objs:
            errors.append(f"{cli_dir}: no object files of the CLI")
        for path, rel in cli_objs:
            for s in nm(path, "--undefined-only"):
                if s.startswith("gpujit__"):
                    errors.append(f"cli {rel}: uses the internal symbol {s}; the CLI is on the public API only")
    return errors


def check_inject_objects(obj_dir, src):
    """The injection library: no call loop among its files; nothing of gpujit's besides itself."""
    objs = [(p, r) for p, r in objects_under(obj_dir) if os.path.exists(os.path.join(src, r))]
    if not objs:
        return [f"{obj_dir}: no object files of the injection library (build it first)"]
    defined, graph, errors = {}, collections.defaultdict(set), []
    for path, rel in objs:
        for s in nm(path, "--defined-only"):
            defined[s] = rel
    for path, rel in objs:
        for s in nm(path, "--undefined-only"):
            owner = defined.get(s)
            if owner and owner != rel:
                graph[unit(rel)].add(unit(owner))
            elif not owner and s.startswith("gpujit"):
                errors.append(f"src/inject/{rel}: uses {s}: the injection library uses nothing else of gpujit")
    cycle = find_cycle(graph)
    if cycle:
        errors.append("src/inject: object files call each other round a loop: " + " -> ".join(cycle))
    return errors


# A function defined at file scope (not static) and the identifiers called in a C file.
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def check_python(py_src):
    """The extension's sources: lengths, includes (its own files and the public headers), the
    internal API unused, and no loop of calls between its files (read from the sources: the
    extension is built by pip, not by this build)."""
    errors, includes, defined, texts = [], collections.defaultdict(set), {}, {}
    for name in sorted(os.listdir(py_src)):
        if not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(py_src, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        texts[name] = text
        rel = f"python/src/{name}"
        if text.count("\n") > MAX_LINES:
            errors.append(f"{rel}: {text.count(NEWLINE)} lines (at most {MAX_LINES}): split it by responsibility")
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            if inc == "gpujit.h" or inc.startswith("gpujit/"):
                continue
            if "/" in inc or not os.path.exists(os.path.join(py_src, inc)):
                errors.append(f'{rel}: #include "{inc}": the extension includes its own files and the public '
                              "headers only")
                continue
            includes[unit(name)].add(unit(inc))
        internal = re.search(r"\b(gpujit__\w+)\s*\(", text)
        if internal:
            errors.append(f"{rel}: calls {internal.group(1)}: the extension is on the public API only")
        if name.endswith(".c"):
            for m in DEFINITION.finditer(text):
                defined[m.group(1)] = unit(name)
    for n in list(includes):
        includes[n].discard(n)
    cycle = find_cycle(includes)
    if cycle:
        errors.append("python/src: files include each other round a loop: " + " -> ".join(cycle))
    calls = collections.defaultdict(set)
    for name, text in texts.items():
        if not name.endswith(".c"):
            continue
        body = re.sub(r"/\*.*?\*/|//[^\n]*|\"(\\.|[^\"\\])*\"", " ", text, flags=re.S)
        for m in CALL.finditer(body):
            owner = defined.get(m.group(1))
            if owner and owner != unit(name):
                calls[unit(name)].add(owner)
    cycle = find_cycle(calls)
    if cycle:
        errors.append("python/src: files call each other round a loop: " + " -> ".join(cycle))
    return errors


STACKED_DOC = re.compile(r"/\*\*(?:(?!\*/).)*\*/[ \t]*\n[ \t]*/\*\*", re.S)
BLANK_RUN = re.compile(r"\n\n\n+")
GUARD = re.compile(r"^#ifndef (\w+)\n#define (\w+)\n", re.M)
FOLDER_ROW = re.compile(r"^\| `src/([a-z_/]+)/` \| (.*)\|$", re.M)


def folder_rows(doc_path):
    """The Folders table: each `src/<folder>/` row's text."""
    with open(doc_path, encoding="utf-8") as f:
        return {m.group(1): m.group(2) for m in FOLDER_ROW.finditer(f.read())}


def named_in(row, sub):
    """Whether a row names file `sub` (its path under the row's folder), as `sub` or as a pattern
    such as `cmd_<verb>.c`."""
    for name in re.findall(r"`([^`]+\.c)`", row):
        if name == sub or re.fullmatch(re.sub(r"<[^>]+>", "[a-z0-9_]+", re.escape(name).replace("\\<", "<")
                                            .replace("\\>", ">")), sub):
            return True
    return False


def check_debris(root, doc_path):
    """Stacked doc comments and blank runs in src/ and python/src, unnamed src/**/*.c, and header
    guards that do not name their header's path."""
    errors, rows = [], folder_rows(doc_path)
    for top in ("src", "python/src"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for m in STACKED_DOC.finditer(text):
                    errors.append(f"{rel}:{text.count(NEWLINE, 0, m.end()) + 1}: a doc comment right below another: "
                                  "one of them describes nothing")
                for m in BLANK_RUN.finditer(text):
                    errors.append(f"{rel}:{text.count(NEWLINE, 0, m.start()) + 2}: a run of blank lines (one at most)")
                if top != "src":
                    continue
                under = rel[len("src/"):]
                if name.endswith(".h"):
                    want = "GPUJIT_" + re.sub(r"[/.]", "_", under).upper()
                    g = GUARD.search(text)
                    if not g or g.group(1) != g.group(2) or g.group(1) != want:
                        errors.append(f"{rel}: its header guard is {g.group(1) if g else 'missing'}, not {want} "
                                      "(the guard names the header's path)")
                    continue
                parts = under.split("/")
                folder = "/".join(parts[:2]) if len(parts) > 2 and "/".join(parts[:2]) in rows else parts[0]
                if not named_in(rows.get(folder, ""), under[len(folder) + 1:]):
                    errors.append(f"{rel}: not named in the row of src/{folder}/ in docs/architecture.md's Folders "
                                  "table: say what it is for there")
    return errors


PROTOCOL_H = "src/inject/protocol.h"
RECORD_PY = "src/inject/python/_gpujit_profile_hook/_record.py"


def check_protocol_py(root):
    """The Python hook's copy of the record protocol (_record.py's RECORD_VERSION, ENV_DIR, KINDS)
    is the header's, and no "k" is written outside KINDS' names."""
    try:
        with open(os.path.join(root, PROTOCOL_H), encoding="utf-8") as f:
            header = f.read()
        with open(os.path.join(root, RECORD_PY), encoding="utf-8") as f:
            py = f.read()
    except OSError as e:
        return [f"record protocol: {e}"]
    errors = []
    kinds = set(re.findall(r'X\(\w+, "(\w+)"\)', header[header.index("GPUJIT_RECORD_KINDS(X)"):]))
    version = re.search(r"#define GPUJIT_RECORD_VERSION (\d+)", header).group(1)
    envs = set(re.findall(r'X\(\w+, "(\w+)"\)', header[header.index("GPUJIT_RECORD_ENV(X)"):
                                                      header.index("GPUJIT_FROM_HASH_ENV")]))
    m = re.search(r"^RECORD_VERSION = (\d+)$", py, re.M)
    if not m or m.group(1) != version:
        errors.append(f"{RECORD_PY}: RECORD_VERSION {m.group(1) if m else 'missing'}, {PROTOCOL_H} says {version}")
    m = re.search(r'^ENV_DIR = "(\w+)"$', py, re.M)
    if not m or m.group(1) not in envs:
        errors.append(f"{RECORD_PY}: ENV_DIR {m.group(1) if m else 'missing'} is not in {PROTOCOL_H}'s GPUJIT_RECORD_ENV")
    m = re.search(r"^KINDS = \(([^)]*)\)$", py, re.M)
    py_kinds = set(re.findall(r'"(\w+)"', m.group(1))) if m else set()
    if not m:
        errors.append(f"{RECORD_PY}: no KINDS table")
    for k in sorted(py_kinds - kinds):
        errors.append(f'{RECORD_PY}: kind "{k}" is not in {PROTOCOL_H}\'s GPUJIT_RECORD_KINDS')
    hook = os.path.join(root, os.path.dirname(os.path.dirname(RECORD_PY)))
    for d, _, files in os.walk(hook):
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    text = f.read()
                for k in re.findall(r'(?:"k": |write\()"(\w+)"', text):
                    if k not in py_kinds:
                        errors.append(f'{os.path.relpath(os.path.join(d, name), root)}: writes kind "{k}", not in '
                                      f"_record.py's KINDS")
    return errors


def run(args):
    allowed, public_only = parse_table(args.doc)
    errors = check_sources(args.src, allowed, public_only)
    if args.objects:
        errors += check_objects(args.src, args.objects, args.cli_objects, allowed, public_only)
    if args.inject_objects:
        errors += check_inject_objects(args.inject_objects, os.path.join(args.src, "inject"))
    if args.python:
        errors += check_python(args.python)
    if args.functions:
        dirs = [d for d in ("src", "python/src") if os.path.isdir(os.path.join(args.functions, d))]
        errs, notes = check_functions(args.functions, dirs, PENDING)
        errors += errs
        errors += check_debris(args.functions, args.doc)
        errors += check_protocol_py(args.functions)
        for n in notes:
            print("layers: " + n)
    for e in errors:
        print("layers: " + e)
    if errors:
        print(f"layers: {len(errors)} violation(s) of docs/architecture.md")
        return 1
    print(f"layers: ok ({len(allowed)} folders" + (", includes and symbols)" if args.objects else ", includes)"))
    return 0


def self_test(doc):
    """Plant one violation of each kind in a copy of a small tree; each must be reported."""
    cases = {
        "upward include": {"base/a.c": '#include "module/m.h"\n'},
        "unknown folder": {"base/a.c": '#include "nowhere/x.h"\n'},
        "bare internal include": {"cache/store/b.c": '#include "b.h"\n'},
        "file loop": {"cache/store/b.c": '#include "cache/store/c.h"\n',
                      "cache/store/c.c": '#include "cache/store/b.h"\n'},
        "store uses records": {"cache/store/b.c": '#include "cache/records/r.h"\n'},
        "cli internal header": {"cli/main.c": '#include "base/error.h"\n'},
        "long file": {"base/a.c": "/* x */\n" * (MAX_LINES + 1)},
        "file outside folders": {"loose.c": "int x;\n"},
        "sub-folder upward include": {"compile/toolkit/t.c": '#include "compile/nvrtc/n.h"\n'},
        "file loose in a split folder": {"compile/loose.c": "int x;\n"},
        "upward include of a split folder": {"compile/image/i.c": '#include "module/m.h"\n'},
    }
    base_tree = {"base/a.c": "", "base/error.h": "", "module/m.h": "", "cache/store/b.c": "",
                 "cache/store/b.h": "", "cache/store/c.c": "", "cache/store/c.h": "",
                 "cache/records/r.h": "", "cache/records/r.c": '#include "cache/store/b.h"\n', "cli/main.c": '#include "gpujit.h"\n#include "cli.h"\n',
                 "cli/cli.h": "", "compile/toolkit/t.c": "", "compile/toolkit/t.h": "", "compile/image/i.c": "",
                 # a sub-folder using the one below it, and a folder above using the split folder whole
                 "compile/nvrtc/n.h": "", "compile/nvrtc/n.c": '#include "compile/toolkit/t.h"\n',
                 "module/m.c": '#include "compile/nvrtc/n.h"\n#include "compile/image/i.h"\n',
                 "compile/image/i.h": ""}
    allowed, public_only = parse_table(doc)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, planted in [("clean tree", {})] + list(cases.items()):
            src = os.path.join(tmp, "src")
            shutil.rmtree(src, ignore_errors=True)
            for rel, text in {**base_tree, **planted}.items():
                os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
                with open(os.path.join(src, rel), "w") as f:
                    f.write(text)
            errors = check_sources(src, allowed, public_only)
            ok = (not errors) if not planted else bool(errors)
            print(f"self-test {name}: {'ok' if ok else 'NOT CAUGHT' if planted else 'false alarm'}"
                  + (f" ({errors[0]})" if errors else ""))
            failures += not ok
        failures += self_test_objects(tmp, allowed, public_only)
        failures += self_test_python(tmp)
        failures += self_test_functions(tmp)
        failures += self_test_debris(tmp)
        failures += self_test_protocol_py(tmp)
    return 1 if failures else 0


def self_test_protocol_py(tmp):
    """The hook's copy of the protocol: equal passes; a kind, a version or an adapter's kind of its
    own is caught."""
    header = ('#define GPUJIT_RECORD_VERSION 2\n#define GPUJIT_RECORD_ENV(X) \\\n  X(DIR, "GPUJIT_PROFILE_DIR")\n'
              '#define GPUJIT_FROM_HASH_ENV "X"\n#define GPUJIT_RECORD_KINDS(X) \\\n  X(PROC, "proc") \\\n'
              '  X(UNIT, "unit")\n')
    good = 'RECORD_VERSION = 2\nENV_DIR = "GPUJIT_PROFILE_DIR"\nKINDS = ("proc", "unit")\nwrite("unit")\n'
    cases = {"equal": (good, "", None),
             "kind": (good.replace('"unit")\n', '"unit", "bind")\n'), "", 'kind "bind" is not in'),
             "version": (good.replace("= 2", "= 1"), "", "RECORD_VERSION 1"),
             "adapter's kind": (good, 'write("span")\n', 'writes kind "span"')}
    failures = 0
    for name, (py, adapter, want) in cases.items():
        root = os.path.join(tmp, "proto-" + name.replace(" ", "-").replace("'", ""))
        for rel, text in ((PROTOCOL_H, header), (RECORD_PY, py),
                          (os.path.join(os.path.dirname(RECORD_PY), "_fw.py"), adapter)):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        errors = check_protocol_py(root)
        ok = not errors if want is None else any(want in e for e in errors)
        print(f"self-test protocol {name}: {'ok' if ok else 'NOT CAUGHT' if want else 'false alarm'}"
              + (f" ({errors[0]})" if errors else ""))
        failures += not ok
    return failures


def self_test_debris(tmp):
    """A stacked doc comment, a blank run, an unnamed file, a guard of another path: each must be
    caught; a clean tree (a file named by a pattern included) must pass."""
    doc = ("## Folders\n\n| folder | what it owns |\n|---|---|\n"
           "| `src/base/` | the clock (`clock.c`) |\n| `src/cli/` | one file per command (`cmd_<verb>.c`) |\n")
    clean = {"src/base/clock.c": "/* The clock. */\n\n/** Now. */\nint now(void);\n",
             "src/base/clock.h": "#ifndef GPUJIT_BASE_CLOCK_H\n#define GPUJIT_BASE_CLOCK_H\n#endif\n",
             "src/cli/cmd_build.c": "int x;\n"}
    cases = {
        "clean": ({}, None),
        "stacked doc comment": ({"src/base/clock.h": "#ifndef GPUJIT_BASE_CLOCK_H\n#define GPUJIT_BASE_CLOCK_H\n"
                                 "/** A. */\n/** B. */\nint b;\n#endif\n"}, "describes nothing"),
        "blank run": ({"src/base/clock.c": "int a;\n\n\nint b;\n"}, "a run of blank lines"),
        "unnamed file": ({"src/base/extra.c": "int x;\n"}, "src/base/extra.c: not named"),
        "guard of another path": ({"src/base/clock.h": "#ifndef GPUJIT_CLOCK_H\n#define GPUJIT_CLOCK_H\n#endif\n"},
                                  "not GPUJIT_BASE_CLOCK_H"),
    }
    failures = 0
    for name, (planted, want) in cases.items():
        root = os.path.join(tmp, "debris-" + name.replace(" ", "-"))
        for rel, text in {**clean, **planted}.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        with open(os.path.join(root, "doc.md"), "w") as f:
            f.write(doc)
        errors = check_debris(root, os.path.join(root, "doc.md"))
        ok = not errors if want is None else any(want in e for e in errors)
        print(f"self-test debris {name}: {'ok' if ok else 'NOT CAUGHT' if want else 'false alarm'}"
              + (f" ({errors[0]})" if errors else ""))
        failures += not ok
    return failures


def self_test_functions(tmp):
    """A long function, a branched one, a pending one grown, a pending one split, a pending one
    gone: each must be caught; functions within the limits, what only looks like a function
    (a brace in a comment, a string, a macro, an initializer) and an unchanged pending one pass."""
    body = "  x++;\n"
    branches = "  if (a && b) x++;\n"  # 2 each
    long_fn = "int long_fn(int x)\n{\n" + body * (MAX_FUNCTION_LINES - 3) + "  return x;\n}\n"
    short_fn = "int short_fn(int x)\n{\n" + body * (MAX_FUNCTION_LINES - 4) + "  return x;\n}\n"
    branchy = "int branchy(int a, int b, int x)\n{\n" + branches * ((MAX_FUNCTION_CCN + 1) // 2) + "  return x;\n}\n"
    calm = "int calm(int a, int b, int x)\n{\n" + branches * ((MAX_FUNCTION_CCN - 1) // 2) + "  return x;\n}\n"
    decoys = ('#define M(x) { if (x) {} }\nstatic const char *s = "f(void) { if (a && b) }";\n'
              "/* g(void) { */\nstruct t { int (*fn)(void); } tab[] = { {0} };\nchar c = '{';\n")
    cases = {
        "within the limits": ({"src/a/a.c": short_fn + calm + decoys}, {}, None),
        "long function": ({"src/a/a.c": long_fn}, {}, "long_fn: 121 lines"),
        "branched function": ({"python/src/a.c": branchy}, {}, "branchy:"),
        "pending, unchanged": ({"src/a/a.c": long_fn}, {("src/a/a.c", "long_fn"): (121, 1)}, None),
        "pending, grown": ({"src/a/a.c": long_fn}, {("src/a/a.c", "long_fn"): (120, 1)}, "grew to 121 lines"),
        "pending, split": ({"src/a/a.c": short_fn}, {("src/a/a.c", "short_fn"): (121, 1)}, "within the limits now"),
        "pending, gone": ({"src/a/a.c": short_fn}, {("src/a/a.c", "long_fn"): (121, 1)}, "no function long_fn"),
    }
    failures = 0
    for name, (files, pending, want) in cases.items():
        root = os.path.join(tmp, "fn-" + name.replace(" ", "-").replace(",", ""))
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        errors, _ = check_functions(root, ["src", "python/src"], pending)
        ok = not errors if want is None else any(want in e for e in errors)
        print(f"self-test functions {name}: {'ok' if ok else 'NOT CAUGHT' if want else 'false alarm'}"
              + (f" ({errors[0]})" if errors else ""))
        failures += not ok
    return failures


def self_test_python(tmp):
    """The Python wing: a call loop between two files, a long file, an internal symbol, a header
    from elsewhere; each must be caught, and a clean pair must pass."""
    cases = {
        "clean": ({"a.c": "int a_fn(void);\nint a_fn(void) { return b_fn(); }\n",
                   "b.c": "int b_fn(void);\nint b_fn(void) { return 1; }\n"}, None),
        "call loop": ({"a.c": "int a_fn(int n)\n{ return n ? b_fn(n - 1) : 0; }\n",
                       "b.c": "int b_fn(int n)\n{ return n ? a_fn(n - 1) : 0; }\n"}, "call each other round a loop"),
        "long file": ({"a.c": "/* x */\n" * (MAX_LINES + 1)}, "lines (at most"),
        "internal symbol": ({"a.c": "int a_fn(void)\n{ return gpujit__thing(); }\n"}, "public API only"),
        "foreign header": ({"a.c": '#include "cache/store.h"\n'}, "its own files and the public headers"),
    }
    failures = 0
    for name, (files, want) in cases.items():
        d = os.path.join(tmp, "py-" + name.replace(" ", "-"))
        os.makedirs(d)
        for rel, text in files.items():
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        errors = check_python(d)
        ok = not errors if want is None else any(want in e for e in errors)
        print(f"self-test python {name}: {'ok' if ok else 'NOT CAUGHT' if want else 'false alarm'}"
              + (f" ({errors[0]})" if errors else ""))
        failures += not ok
    return failures


def self_test_objects(tmp, allowed, public_only):
    """Compile tiny objects with an upward call, a call loop and a stray span; each must be caught."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        print("self-test objects: SKIPPED (no C compiler to make objects with)")
        return 0
    tree = {
        "base/a.c": "int base_a(void); int module_m(void); int base_a(void) { return module_m(); }\n",
        "module/m.c": "int module_m(void); int module_m(void) { return 1; }\n",
        "cache/store/b.c": "int cache_b(int); int cache_c(int); int cache_b(int n) { return n ? cache_c(n - 1) : 0; }\n",
        "cache/store/c.c": "int cache_b(int); int cache_c(int); int cache_c(int n) { return n ? cache_b(n - 1) : 0; }\n",
        "trace/t.c": "void gpujit_trace_span_begin(void); void gpujit_trace_span_begin(void) {}\n",
        "ncu/n.c": "void gpujit_trace_span_begin(void); void ncu_n(void); void ncu_n(void) { gpujit_trace_span_begin(); }\n",
    }
    want = ["base/a.c: calls module_m", "call each other round a loop", "ncu/n.c: calls gpujit_trace_span_begin: stage"]
    src, obj = os.path.join(tmp, "osrc"), os.path.join(tmp, "oobj")
    for rel, text in tree.items():
        for d in (src, obj):
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
        with open(os.path.join(src, rel), "w") as f:
            f.write(text)
        subprocess.run([cc, "-c", "-o", os.path.join(obj, rel + ".o"), os.path.join(src, rel)], check=True)
    errors = check_objects(src, obj, None, allowed, public_only)
    failures = 0
    for w in want:
        caught = any(w in e for e in errors)
        print(f"self-test objects '{w}': {'ok' if caught else 'NOT CAUGHT'}")
        failures += not caught
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", required=True)
    p.add_argument("--doc", required=True)
    p.add_argument("--objects", help="the library's object directory (…/gpujit_static.dir/src)")
    p.add_argument("--cli-objects", help="the CLI's object directory")
    p.add_argument("--inject-objects", help="the injection library's object directory (…/gpujit_inject.dir/src/inject)")
    p.add_argument("--python", help="the Python extension's sources (python/src)")
    p.add_argument("--functions", help="the repository root: every function of src/ and python/src within "
                   "the limits")
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args()
    rc = self_test(args.doc) if args.self_test else 0
    return rc or run(args)


if __name__ == "__main__":
    sys.exit(main())
