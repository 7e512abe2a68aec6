"""The report's C side knows no framework (issue 45): adapters declare in their records what the
report needs, so no name of a framework the start-up hook adapts appears in src/profile — not in
code, messages or comments. Usage: framework_names.py SRC_DIR; exits 1 naming each hit."""
import pathlib
import re
import sys

src = pathlib.Path(sys.argv[1])
hook = src / "inject" / "python" / "_gpujit_profile_hook"
# the adapters' own names (_xla.py -> xla), and the frameworks behind them
names = {p.stem.lstrip("_") for p in hook.glob("_*.py") if not p.stem.startswith("__")}
names -= {"record", "outer"}  # the hook's own helpers
names |= {"jax", "triton", "inductor", "torch", "pytorch", "xla", "cupy", "warp", "numba", "taichi", "dynamo"}
word = re.compile(r"\b(%s)\b" % "|".join(sorted(names)), re.IGNORECASE)
hits = []
for f in sorted((src / "profile").rglob("*")):
    if f.is_file() and f.suffix in (".c", ".h", ".html", ".js", ".css"):
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if word.search(line):
                hits.append("%s:%d: %s" % (f.relative_to(src.parent), n, line.strip()))
print("\n".join(hits) if hits else "src/profile names no framework (%d names checked)" % len(names))
sys.exit(1 if hits else 0)
