# exit: 0
# expect: *built: 0*
# expect: *in-process, killed: ptxas still running: no*
# expect: *server worker, killed: ptxas still running: no*
# expect: *server, killed: ptxas still running: no*
# reject: *never started*
# The lean pass's ptxas dies with the process that started it: a build, a server's worker or the
# server killed outright (SIGKILL, which no handler sees) while ptxas runs leaves no ptxas behind.
cuda=${CUDA_PATH:-/usr/local/cuda}
[ -x "$cuda/bin/ptxas" ] || { echo "skip: no ptxas in $cuda"; exit 77; }
mkdir -p tk/bin tmp
for f in "$cuda"/*; do [ "$(basename "$f")" = bin ] || ln -s "$f" tk/; done
for f in "$cuda"/bin/*; do [ "$(basename "$f")" = ptxas ] || ln -s "$f" tk/bin/; done
cat > tk/bin/ptxas <<SH
#!/bin/sh
[ -n "\$FAKE_PTXAS" ] && [ -e "$PWD/slow" ] && { echo \$\$ > "$PWD/ptxas.pid"; exec sleep 60; }
exec "$cuda/bin/ptxas" "\$@"
SH
chmod +x tk/bin/ptxas
export CUDA_PATH=$PWD/tk TMPDIR=$PWD/tmp FAKE_PTXAS=1
$GPUJIT build -q --no-cache --arch sm_90 -o a.cubin "$EXAMPLES/saxpy.cu"; echo "built: $?"
# the slow ptxas's pid once it runs; later ones (a client's build after its worker died) are real
wait_ptxas() {
  touch slow
  for _ in $(seq 600); do [ -s ptxas.pid ] && { pid=$(cat ptxas.pid); rm -f slow ptxas.pid; return 0; }; sleep 0.1; done
  echo "$1: the slow ptxas never started"; rm -f slow; return 1
}
gone() { # ptxas still running, 2 s after the kill?
  for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || { echo no; return; }; sleep 0.1; done
  echo yes; kill -9 "$pid" 2>/dev/null
}
# in-process
GPUJIT_SERVER=0 $GPUJIT build -q --no-cache --arch sm_90 -o b.cubin "$EXAMPLES/saxpy.cu" >/dev/null 2>&1 &
build=$!
wait_ptxas in-process && { kill -9 $build; wait $build 2>/dev/null; echo "in-process, killed: ptxas still running: $(gone)"; }
# a server's worker, then the server
c=$PWD/c
"$GPUJIT" server start --cache-dir "$c" --workers 1 >/dev/null
n=0
for what in "server worker" server; do
  n=$((n + 1)) # another module each time: a miss
  printf 'extern "C" __global__ void k%s(float *x) { x[0] *= 2.0f; }\n' "$n" > "k.cu"
  "$GPUJIT" build -q --arch sm_90 --cache-dir "$c" --no-pch -o k.cubin k.cu >/dev/null 2>&1 &
  build=$!
  if wait_ptxas "$what"; then
    worker=$(awk '{print $4}' "/proc/$pid/stat")
    server=$(awk '{print $4}' "/proc/$worker/stat")
    if [ "$what" = server ]; then kill -9 "$server"; else kill -9 "$worker"; fi
    echo "$what, killed: ptxas still running: $(gone)"
  fi
  kill -9 $build 2>/dev/null; wait $build 2>/dev/null
done
"$GPUJIT" server stop --cache-dir "$c" >/dev/null 2>&1
exit 0
