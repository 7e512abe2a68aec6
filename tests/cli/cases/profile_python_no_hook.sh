# exit: 0
# expect: *-I: *runs Python with -I: gpujit's start-up hook cannot load there*
# expect: *-Es: *runs Python with -E: gpujit's start-up hook*
# expect: *-X dev -S: *runs Python with -S: gpujit's*
# expect: *plain: no note*
# expect: *after -c: no note*
# A Python started with -I, -E or -S cannot load gpujit's start-up hook: the report says which
# process ran without it, instead of showing no framework compiles and saying nothing.
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
n() { out=$($GPUJIT profile -- python3 "$@" 2>&1); echo "$out" | grep -o "runs Python with .*" | head -1 || true; }
echo "-I: $(n -I -c pass)"
echo "-Es: $(n -Es -c pass)"
echo "-X dev -S: $(n -X dev -S -c pass)"
r=$(n -c pass); echo "plain: ${r:-no note}"
r=$(n -c pass -I); echo "after -c: ${r:-no note}"
