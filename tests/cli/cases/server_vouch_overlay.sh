# exit: 0
# expect: *first: miss*
# expect: *second: hit 1*
# expect: *vouched: 0, asked: yes*
# expect: *the server's reason: on overlayfs (type 0x794c7630)*
# expect: *a layer edited: miss 2*
# reject: *stale*
# The server never vouches for a group on overlayfs: a write made to one of its layers changes
# what the overlay shows and raises no inotify event on the overlay's inode (a container's files
# are such layers). Each client checks such a group itself, so a layer's edit is a miss. The
# toolkit (CUDA_PATH) is a copy whose gj_tk.h lies in the lower layer of an overlay mounted in a
# private mount namespace.
if [ -z "${GJ_VOUCH_NS:-}" ]; then
  { [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; } ||
    { echo "skip: an overlay mount needs root and unshare -m"; exit 77; }
  GJ_VOUCH_NS=1 exec unshare -m --propagation private bash "$0"
fi
c="$PWD/c"
mkdir -p l/tk/include u w ov
T="$PWD/ov/tk"
for e in /usr/local/cuda/*; do [ "$(basename "$e")" = include ] || ln -s "$e" l/tk/; done
for e in /usr/local/cuda/include/*; do ln -s "$e" l/tk/include/; done
printf '#define GJ_TK 1\n' > l/tk/include/gj_tk.h
mount -t overlay overlay -o "lowerdir=$PWD/l,upperdir=$PWD/u,workdir=$PWD/w" "$PWD/ov" ||
  { echo "skip: overlayfs cannot be mounted here"; exit 77; }
export CUDA_PATH="$T"
printf '#include <gj_tk.h>\nextern "C" __global__ void k(int *p) { p[0] = GJ_TK; }\n' > k.cu
trap '"$GPUJIT" server stop --cache-dir "$c" >/dev/null 2>&1' EXIT
settle() {
  for _ in $(seq 400); do
    "$GPUJIT" server status --cache-dir "$c" --json 2>/dev/null | python3 -c 'import json,sys; sys.exit(any(w.get("busy") for w in json.load(sys.stdin).get("workers",[])))' && return
    sleep 0.05
  done
  echo "the server's worker still busy after 20 s"
}
st() { "$GPUJIT" -v build --arch sm_90 --cache-dir "$c" --ptx -o k.ptx k.cu 2>>v.log | head -1 | grep -o 'miss\|hit'; settle >&2; }
val() { grep -o 'mov.u32.*, [0-9]*;' k.ptx | grep -o '[0-9]*;' | tr -d ';' | head -1; }
echo "first: $(st)"
"$GPUJIT" server start --cache-dir "$c" --workers 1 >/dev/null
echo "second: $(st) $(val)"
"$GPUJIT" server status --cache-dir "$c" --json | python3 -c 'import json,sys; g=json.load(sys.stdin).get("watched_groups",{}); print("vouched: %d, asked: %s" % (g.get("vouched",0), "yes" if g.get("asked",0) >= 1 else "no"))'
grep -q "checked here: .*on a filesystem (type 0x794c7630)" v.log && echo "the server's reason: on overlayfs (type 0x794c7630)"
sleep 1.1 # older than the same-timestamp window
printf '#define GJ_TK 2\n' > l/tk/include/gj_tk.h # the lower layer, not through the overlay
echo "a layer edited: $(st) $(val)"
v=$(val); [ "$v" = 2 ] || echo "stale value $v"
