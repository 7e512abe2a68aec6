# exit: 0
# expect: *-I: *runs Python with -I: gpujit's start-up hook cannot load there*
# expect: *-Es: *runs Python with -E: gpujit's start-up hook*
# expect: *-X dev -S: *runs Python with -S: gpujit's*
# expect: *plain: no note*
# expect: *after -c: no note*
# expect: *own sitecustomize first, no user site: *is a Python that ran without gpujit's start-up hook*
# expect: *plain, forked children: no note*
# expect: *old note kinds only where due: yes*
# A Python started with -I, -E or -S cannot load gpujit's start-up hook: the report says which
# process ran without it, instead of showing no framework compiles and saying nothing. So does a
# Python whose own sitecustomize comes first on PYTHONPATH where usercustomize cannot run (a venv;
# -s here): the report finds no hook file of that process. A forked child, which writes the hook's
# file only when it records, is no such case.
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
n() { out=$($GPUJIT profile -- python3 "$@" 2>&1); echo "$out" | grep -o "runs Python with .*" | head -1 || true; }
echo "-I: $(n -I -c pass)"
echo "-Es: $(n -Es -c pass)"
echo "-X dev -S: $(n -X dev -S -c pass)"
r=$(n -c pass); echo "plain: ${r:-no note}"
r=$(n -c pass -I); echo "after -c: ${r:-no note}"
mkdir own; echo 'OWN = 1' > own/sitecustomize.py
w() { out=$($GPUJIT profile -- "$@" 2>&1); echo "$out" | grep -o "is a Python that ran without.*" | head -1 || true; }
echo "own sitecustomize first, no user site: $(w sh -c 'PYTHONPATH=$PWD/own:$PYTHONPATH exec python3 -s -c pass')"
r=$(w python3 -c 'import os
for _ in range(3):
    pid = os.fork()
    if pid == 0: os._exit(0)
    os.waitpid(pid, 0)'); echo "plain, forked children: ${r:-no note}"
r=$($GPUJIT profile -- python3 -I -c pass 2>&1)
case "$r" in *"runs Python with -I"*) case "$r" in *"ran without gpujit"*) ;; *) echo "old note kinds only where due: yes";; esac;; esac
