# exit: 0
# expect: *first: miss*
# expect: *second: hit*
# expect: *vouched: yes*
# expect: *edited in place: miss 2*
# expect: *again: hit 2*
# expect: *renamed over: miss 3*
# expect: *link retargeted: miss 5*
# expect: *link's directory renamed: miss 7*
# expect: *vouched since the start: 2 of 2 hits*
# expect: *the server's reason: gj_tk.h changed (content)*
# expect: *unwatched by the server: miss 6*
# expect: *after all that: hit 6*
# reject: *stale*
# reject: *not on tmpfs*
# reject: *still busy*
# A running server vouches for the toolkit's dependency group, which a fresh process would
# otherwise stat file by file; every way of changing a toolkit header must still miss. The
# toolkit here is a copy (CUDA_PATH: its headers copied, the rest links), so that its headers
# can be edited. The case runs on a tmpfs of its own, in a private mount namespace: a filesystem
# where inotify sees every write. A container's own files are on overlayfs, where the server
# vouches for nothing (server_vouch_overlay.sh).
if [ -z "${GJ_VOUCH_NS:-}" ]; then
  { [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; } ||
    { echo "skip: a tmpfs of its own needs root and unshare -m"; exit 77; }
  GJ_VOUCH_NS=1 exec unshare -m --propagation private bash "$0"
fi
mount -t tmpfs gpujit-vouch "$PWD" || { echo "skip: tmpfs cannot be mounted here"; exit 77; }
cd "$PWD" || exit 1
[ "$(stat -f -c %T .)" = tmpfs ] || echo "not on tmpfs: $(stat -f -c %T .)"
c="$PWD/c"
T="$PWD/tk"
mkdir -p "$T/include" v/a v/b
for e in /usr/local/cuda/*; do [ "$(basename "$e")" = include ] || ln -s "$e" "$T/"; done
cp -r /usr/local/cuda/include/. "$T/include/"
export CUDA_PATH="$T"
printf '#define GJ_TK 1\n' > "$T/include/gj_tk.h"
printf '#define GJ_LINK 4\n' > v/a/v.h
printf '#define GJ_LINK 5\n' > v/b/v.h
printf '#include <gj_tk.h>\n#include <gj_link.h>\nextern "C" __global__ void k(int *p) { p[0] = GJ_TK; p[1] = GJ_LINK; }\n' > k.cu
ln -s "$PWD/v/a/v.h" "$T/include/gj_link.h"
# A build the server's worker made is answered before it is stored: wait until the worker is idle
# (`server status`: busy while storing), so that the next build's lookup sees the store.
settle() {
  for _ in $(seq 400); do
    "$GPUJIT" server status --cache-dir "$c" --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(any(w.get("busy") for w in json.load(sys.stdin).get("workers",[])))' && return
    sleep 0.05
  done
  echo "the server's worker still busy after 20 s"
}
st() { "$GPUJIT" -v build --arch sm_90 --cache-dir "$c" --ptx -o k.ptx k.cu 2>>v.log | head -1 | grep -o 'miss\|hit'; settle >&2; }
val() { grep -o 'mov.u32.*, [0-9]*;' k.ptx | grep -o '[0-9]*;' | tr -d ';' | head -1; }
val2() { grep -o 'mov.u32.*, [0-9]*;' k.ptx | grep -o '[0-9]*;' | tr -d ';' | tail -1; }
echo "first: $(st)"
"$GPUJIT" server start --cache-dir "$c" --workers 1 >/dev/null
echo "second: $(st)"
"$GPUJIT" server status --cache-dir "$c" --json | python3 -c 'import json,sys; g=json.load(sys.stdin).get("watched_groups",{}); print("vouched:", "yes" if g.get("vouched",0)>=1 else "no", g)'
sleep 1.1 # older than the same-timestamp window: the stat alone would vouch for the old content
printf '#define GJ_TK 2\n' > "$T/include/gj_tk.h" # same size, same inode
echo "edited in place: $(st) $(val)"
echo "again: $(st) $(val)"
printf '#define GJ_TK 3\n' > "$T/include/gj_tk.h.new" && mv "$T/include/gj_tk.h.new" "$T/include/gj_tk.h"
echo "renamed over: $(st) $(val)"
ln -sfn "$PWD/v/b/v.h" "$T/include/gj_link.h"
echo "link retargeted: $(st) $(val2)"
mv v/b v/old && mkdir v/b && printf '#define GJ_LINK 7\n' > v/b/v.h
echo "link's directory renamed: $(st) $(val2)"
"$GPUJIT" server status --cache-dir "$c" --json | python3 -c 'import json,sys; g=json.load(sys.stdin)["watched_groups"]; print("vouched since the start: %d of 2 hits" % g["vouched"])'
grep -q "checked here: the group changed since it was recorded: $T/include/gj_tk.h changed (content)" v.log &&
  echo "the server's reason: gj_tk.h changed (content)"
"$GPUJIT" server stop --cache-dir "$c" >/dev/null
printf '#define GJ_TK 6\n' > "$T/include/gj_tk.h"
"$GPUJIT" server start --cache-dir "$c" --workers 1 >/dev/null
echo "unwatched by the server: $(st) $(val)"
echo "after all that: $(st) $(val)"
v=$(val); [ "$v" = 6 ] || echo "stale value $v"
"$GPUJIT" server stop --cache-dir "$c" >/dev/null
