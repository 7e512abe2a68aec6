# exit: 0
# expect: *out.txt: 0 bytes*
# expect: *compiles: jit(after) jit(before) jit(late)*
# expect: *note: process * jax was imported past gpujit's import hook*
# expect: *sitecustomize: not gpujit's*
# reject: *Traceback*
# The Python start-up hook end to end: a program that closes every descriptor and opens its own
# file keeps it (the records are all in the report), a program that takes gpujit's finder off
# sys.meta_path still has its framework adapted and the report says so, and a program without a
# sitecustomize cannot import the hook's (stand-in of JAX's monitoring API: tests/profile/fakes).
fakes=$(cd "$(dirname "$GPUJIT")/../tests/profile/fakes" 2>/dev/null && pwd || echo "$EXAMPLES/../tests/profile/fakes")
cat > closes.py <<PY
import os, sys
sys.path.insert(0, "$fakes")
import jax
jax.jit_compile("before", 0, 0, 0)
os.closerange(3, 1000)
fd = os.open("out.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
jax.jit_compile("after", 0, 0, 0)
os.close(fd)
PY
cat > bypass.py <<PY
import sys
sys.path.insert(0, "$fakes")
sys.meta_path[:] = [f for f in sys.meta_path if "gpujit" not in type(f).__module__]
import jax
import fractions
jax.jit_compile("late", 0, 0, 0)
try:
    import sitecustomize  # none, or the interpreter's own (Ubuntu's Python ships one)
    print("sitecustomize:", "gpujit's" if "gpujit" in sitecustomize.__file__ else "not gpujit's", sitecustomize.__file__)
except ImportError as e:
    print("sitecustomize: not gpujit's:", type(e).__name__)
PY
printf 'import subprocess, sys\nfor p in sys.argv[1:]: subprocess.run([sys.executable, p], check=True)\n' > both.py
$GPUJIT profile -q --json p.json --text report.txt -- python3 both.py closes.py bypass.py || echo "profile failed: $?"
echo "out.txt: $(wc -c < out.txt) bytes"
python3 -c 'import json; p = json.load(open("p.json")); print("compiles:", " ".join(sorted(c["name"] for c in p["compiles"] if c["kind"] == "xla")))'
grep "note:" report.txt || echo "no notes"
