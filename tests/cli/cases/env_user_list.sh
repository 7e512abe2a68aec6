# exit: 0
# expect: *NO_COLOR                        1  (environment)*
# expect: *GPUJIT_ARCH                     unset; in effect: the GPU's, else sm_*  (default)*
# expect: *GPUJIT_NO_CACHE                 unset*
# expect: *more, unset: measuring switches, variables `gpujit profile` sets, test hooks: gpujit env --all)*
# expect: *hidden unless --all: GPUJIT_BENCH_CHECK=0 GPUJIT_PROFILE_DIR=0 GPUJIT_SYSFS_ROOT=0*
# expect: *with --all: GPUJIT_BENCH_CHECK=1 GPUJIT_PROFILE_DIR=1 GPUJIT_SYSFS_ROOT=1*
# expect: *set, shown: GPUJIT_BENCH_OBSERVE *0  (environment)  ?measuring switch?*
# expect: *json: every name True NO_COLOR set True GPUJIT_NO_CACHE set False value None groups measuring profile setting system test*
# reject: *GPUJIT_NO_CACHE                 -*
# `gpujit env` lists what a user sets, the system's variables gpujit reads among them (NO_COLOR,
# XDG_CACHE_HOME), says "unset" of what is unset (with the value in effect instead), and keeps the
# measuring switches, the variables `gpujit profile` sets and the tests' hooks for --all (or where
# one is set); --json has them all, each with its group.
"$GPUJIT" env > env.txt
grep -E '^(NO_COLOR|GPUJIT_ARCH|GPUJIT_NO_CACHE) ' env.txt
tail -3 env.txt
c() { grep -c "^$1 " "$2"; }
echo "hidden unless --all: GPUJIT_BENCH_CHECK=$(c GPUJIT_BENCH_CHECK env.txt) GPUJIT_PROFILE_DIR=$(c GPUJIT_PROFILE_DIR env.txt) GPUJIT_SYSFS_ROOT=$(c GPUJIT_SYSFS_ROOT env.txt)"
"$GPUJIT" env --all > all.txt
echo "with --all: GPUJIT_BENCH_CHECK=$(c GPUJIT_BENCH_CHECK all.txt) GPUJIT_PROFILE_DIR=$(c GPUJIT_PROFILE_DIR all.txt) GPUJIT_SYSFS_ROOT=$(c GPUJIT_SYSFS_ROOT all.txt)"
echo "set, shown: $(GPUJIT_BENCH_OBSERVE=0 "$GPUJIT" env | grep '^GPUJIT_BENCH_OBSERVE ')"
"$GPUJIT" env --json | python3 -c '
import json, subprocess, sys
d = json.load(sys.stdin)
v = {x["name"]: x for x in d["variables"]}
names = subprocess.run([sys.argv[1], "env", "--names"], capture_output=True, text=True).stdout.split()
print("json: every name", sorted(names) == sorted(v), "NO_COLOR set", v["NO_COLOR"]["set"],
      "GPUJIT_NO_CACHE set", v["GPUJIT_NO_CACHE"]["set"], "value", v["GPUJIT_NO_CACHE"]["value"],
      "groups", " ".join(sorted({x["group"] for x in d["variables"]})))' "$GPUJIT"
