# exit: 0
# expect: *gcc compiles: 4 (preprocess-only runs not counted)*
# expect: *failed under dash: result 1*
# expect: *failed under os.system: result 1*
# expect: *long command line: output 1*
# expect: *failed as the command itself: exit 1, result 1*
# A tool says its own exit status (from inside its process), so a failure is right whoever reaps
# it — dash's `sh -c`, Python's os.system — and when it is the profiled command itself;
# preprocess-only runs (-E, -M, -fsyntax-only: ccache runs `gcc -E` first) are no compiles; an
# -o after the 256th argument is still seen.
command -v gcc >/dev/null || { echo "skip: no gcc"; exit 77; }
printf 'int f(void) { return 1; }\n#ifdef X300\nint g(int x) { return x * X300 + 7; }\n#endif\n' > k.c
printf 'int f(void) { return undefined_name; }\n' > bad.c
defs=$(for i in $(seq 300); do printf -- '-DX%d=1 ' "$i"; done)
$GPUJIT profile -q --json p.json -- dash -c "gcc -E k.c -o k.i; gcc -M k.c > k.d; gcc -fsyntax-only k.c; gcc -c k.c -o k.o; gcc -c bad.c -o bad.o 2>/dev/null; gcc -c $defs k.c -o long.o; python3 -c 'import os; os.system(\"gcc -c bad.c -o bad2.o 2>/dev/null\")'; exit 0"
$GPUJIT profile -q --json p2.json -- gcc -c bad.c -o bad3.o 2>/dev/null; rc=$?
python3 - "$rc" <<'PY'
import json, os, sys
c = [x for x in json.load(open("p.json"))["compiles"] if x["kind"] == "gcc"]
print("gcc compiles: %d (preprocess-only runs not counted)" % len(c))
bad = [x for x in c if x["options"].endswith("-o bad.o")]
print("failed under dash: result %s" % (bad[0]["result"] if bad else "missing"))
bad2 = [x for x in c if x["options"].endswith("-o bad2.o")]
print("failed under os.system: result %s" % (bad2[0]["result"] if bad2 else "missing"))
long = [x for x in c if x.get("cubin_bytes") == os.path.getsize("long.o") != os.path.getsize("k.o")]
print("long command line: output %d" % len(long))
c2 = [x for x in json.load(open("p2.json"))["compiles"] if x["kind"] == "gcc"]
print("failed as the command itself: exit %s, result %s" % (sys.argv[1], c2[0]["result"] if c2 else "missing"))
PY
