# exit: 0
# expect: *served here: 111*
# expect: *other namespace: 222*
# expect: *why: the client (pid *) is in another mount namespace*
# expect: *other environment: 333*
# expect: *why: *NVRTCWIZ is 'gpujit-test' in the client, unset in the server*
# reject: *old binary*
# The server builds only for clients that see what its workers see: a client in another mount
# namespace (where another directory is mounted over the sources) and one whose NVRTC would read
# another environment are refused, build in-process, and say why under -v.
{ [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; } ||
  { echo "skip: another mount namespace needs root and unshare -m"; exit 77; }
c="$PWD/c"
mkdir -p src over
printf 'extern "C" __global__ void k(int *p) { p[0] = 111; }\n' > src/k.cu
printf 'extern "C" __global__ void k(int *p) { p[0] = 222; }\n' > over/k.cu
val() { grep -o 'mov.u32.*, [0-9]*;' k.ptx | grep -o '[0-9]*;' | tr -d ';' | head -1; }
b() { "$GPUJIT" -v build --arch sm_90 --cache-dir "$c" --ptx -o k.ptx src/k.cu 2>>v.log >/dev/null; }
unset NVRTCWIZ
"$GPUJIT" server start --cache-dir "$c" --workers 1 >/dev/null
trap '"$GPUJIT" server stop --cache-dir "$c" >/dev/null 2>&1' EXIT
b && echo "served here: $(val)"
# the same path, another file in the client's namespace: the server would build its own src/k.cu
export GPUJIT
unshare -m --propagation private bash -c 'mount --bind over src && "$GPUJIT" -v build --arch sm_90 --cache-dir "$1" --ptx -o k.ptx src/k.cu >/dev/null 2>ns.log' _ "$c"
v=$(val); echo "other namespace: $v"; [ "$v" = 222 ] || echo "old binary: $v"
grep -o "server: .*building in-process" ns.log | sed 's/^server: /why: /'
printf 'extern "C" __global__ void k(int *p) { p[0] = 333; }\n' > src/k.cu
NVRTCWIZ=gpujit-test "$GPUJIT" -v build --arch sm_90 --cache-dir "$c" --ptx -o k.ptx src/k.cu >/dev/null 2>env.log
echo "other environment: $(val)"
grep -o "server: .*building in-process" env.log | sed 's/^server: /why: /'
