# exit: 0
# expect: *wrapper: 1 compile named mycxx, inside: as cc1plus*
# expect: *link: 1 compile named mycxx, inside: collect2 ld*
# expect: *cache: 1 compile named mycache, its g++ -E not one*
# expect: *prefixed: 1 compile*
# expect: *tops: 4, the shell none*
# expect: *cpu and wall: True True*
# A compile is recorded as the outermost process whose descendants run a compiler proper, whatever
# it is called: a `#!/bin/sh` wrapper that execs g++ (as CXX=/opt/gcc/bin/g++ is on the GPU
# machine), its link, a cache-like wrapper that runs `g++ -E` and then `g++ -c`, a target-prefixed
# driver — all run by a shell that is no compile.
command -v g++ >/dev/null || { echo "skip: no g++"; exit 77; }
printf 'int main(void) { return 0; }\n' > x.cpp
printf '#!/bin/sh\nexec g++ "$@"\n' > mycxx
printf '#!/bin/sh\nfor a; do case $a in *.cpp) src=$a;; esac; done\ng++ -E "$src" > /dev/null && g++ "$@"\n' > mycache
chmod +x mycxx mycache
prefixed=$(command -v x86_64-linux-gnu-g++ || command -v g++)
$GPUJIT profile -q --json p.json -- sh -c "./mycxx -c x.cpp -o x.o && ./mycxx x.o -o prog && ./mycache -c x.cpp -o y.o && $prefixed -c x.cpp -o z.o" || echo "profile failed: $?"
python3 - <<'PY'
import json
c = json.load(open("p.json"))["compiles"]
tops = [x for x in c if x["within"] < 0]
def under(t):
    kids = [x for x in c if x["within"] == t["id"]]
    return kids + [y for k in kids for y in under(k)]
def inside(t):
    names = {x["kind"] for x in under(t)}
    return " ".join(sorted("ld" if "ld" in n.split("-")[-1].split(".") else "as" if n.endswith("as") else n for n in names))
w = [x for x in tops if x["kind"] == "mycxx" and "-c" in x["options"]]
print("wrapper: %d compile named %s, inside: %s" % (len(w), w[0]["kind"], inside(w[0])))
l = [x for x in tops if x["kind"] == "mycxx" and "-c" not in x["options"]]
print("link: %d compile named %s, inside: %s" % (len(l), l[0]["kind"], inside(l[0])))
k = [x for x in tops if x["kind"] == "mycache"]
print("cache: %d compile named %s, its g++ -E not one" % (len(k), k[0]["kind"]) if all("-E" not in x["options"] for x in c) else "cache: g++ -E counted")
p = [x for x in tops if x["kind"] not in ("mycxx", "mycache")]
print("prefixed: %d compile" % len(p))
print("tops: %d, the shell %s" % (len(tops), "none" if not [x for x in c if x["kind"] in ("sh", "dash", "bash")] else "counted"))
print("cpu and wall:", all(x["cpu_ms"] > 0 for x in tops), all(x["ms"] > 0 for x in tops))
PY
