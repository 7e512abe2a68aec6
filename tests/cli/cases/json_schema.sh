# exit: 0
# expect: *single: gpujit-build 1 cached,name,output,pch,status,time_ms built*
# expect: *project: gpujit-build 1 cached,name,output,pch,status,time_ms built*
# expect: *project why: built since its last build: arch sm_90 -> sm_89; -D N=1 gone*
# expect: *summaries alike: True*
# expect: *why: never built with this source, these options and this toolkit; since its last build: -D N=1 added*
# expect: *failed: rc=3 failed GPUJIT_ECOMPILE True*
# expect: *ls: gpujit-cache-ls list k k*
# expect: *limit: gpujit-cache-limit 2097152*
# expect: *stats: gpujit-cache-stats 2097152 0.2*
# expect: *digits: ok*
# expect: *file: rc=0 stdout=0 gpujit-build*
# expect: *profile: gpujit-profile 1*
# One schema for every --json (docs/json.md): "format" and "version" first; a single build and a
# project build give the same module records and summary; a failed build is a record too; lists
# are lists; numbers that are not whole carry 6 significant digits; --json=FILE writes the file.
c="$PWD/c"
mkdir proj
printf 'extern "C" __global__ void k(float *x) { x[0] *= 2.0f; }\n' >proj/k.cu
py() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }
keys='",".join(sorted(set(d["modules"][0]) & {"name","status","cached","output","time_ms","pch","error"}))'
"$GPUJIT" build --json --arch sm_90 --cache-dir "$c" -o k.cubin proj/k.cu >single.json
echo "single: $(py "print(d['format'], d['version'], $keys, d['modules'][0]['status'])" <single.json)"
"$GPUJIT" build --json --arch sm_90 --no-cache -j1 --out-dir out proj >project.json
echo "project: $(py "print(d['format'], d['version'], $keys, d['modules'][0]['status'])" <project.json)"
"$GPUJIT" build --json --arch sm_90 --cache-dir "$c" -DN=1 -o k.cubin proj/k.cu >again.json
echo "why: $(py "print(d['modules'][0]['miss_reason'])" <single.json); $(py "print(d['modules'][0]['miss_reason'])" <again.json)"
"$GPUJIT" build --json --arch sm_89 --cache-dir "$c" -j1 --out-dir out2 proj >pwhy.json
echo "project why: $(py "m=d['modules'][0]; print(m['status'], m['miss_reason'])" <pwhy.json)"
echo "summaries alike: $(python3 -c 'import json; a,b=(json.load(open(f)) for f in ("single.json","project.json")); print(sorted(a["summary"])==sorted(b["summary"]) and list(a)==list(b))')"
printf 'extern "C" __global__ void bad(float *x) { x[0] = nope; }\n' >bad.cu
"$GPUJIT" build --json --arch sm_90 --cache-dir "$c" bad.cu >bad.json 2>/dev/null; rc=$?
echo "failed: rc=$rc $(py "m=d['modules'][0]; print(m['status'], m['error']['code'], 'nope' in m['error']['log'])" <bad.json)"
echo "ls: $("$GPUJIT" cache ls --json --cache-dir "$c" | py "e=d['entries'][0]; print(d['format'], type(e['kernels']).__name__, ' '.join(e['kernels']), e['name'])")"
echo "limit: $("$GPUJIT" cache limit 2MiB --json --cache-dir "$c" | py "print(d['format'], d['limit_bytes'])")"
"$GPUJIT" build -q --arch sm_90 --cache-dir "$c" -o k.cubin proj/k.cu
echo "stats: $("$GPUJIT" cache stats --json --cache-dir "$c" | py "print(d['format'], d['limit_bytes'], d['hit_rate'])")"
python3 - single.json project.json <<'PY'
import json, sys
bad = []
def walk(v):
    if isinstance(v, dict): [walk(x) for x in v.values()]
    elif isinstance(v, list): [walk(x) for x in v]
    elif isinstance(v, float) and v != int(v):
        digits = len(repr(v).lstrip("-0.").replace(".", "").rstrip("0"))
        if digits > 6 and round(v, 3) != v: bad.append(v)
for f in sys.argv[1:]:
    walk(json.load(open(f)))
print("digits:", "ok" if not bad else bad)
PY
"$GPUJIT" build --json=res.json --arch sm_90 --cache-dir "$c" -o k.cubin proj/k.cu >stdout.txt; rc=$?
echo "file: rc=$rc stdout=$(wc -c <stdout.txt) $(py "print(d['format'])" <res.json)"
echo "profile: $("$GPUJIT" profile --no-cupti --no-frameworks --json -- true | py "print(d['format'], d['version'])")"
