#!/usr/bin/env bash
# Remote caches against real servers started here: redis-server and nginx (WebDAV PUT) on
# 127.0.0.1 at free ports, stopped by pid. A second machine is a second, empty local cache.
# usage: run.sh GPUJIT EXAMPLES
set -uo pipefail
G=$(realpath "$1")
EX=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
for tool in redis-server redis-cli nginx python3; do
  if ! command -v $tool >/dev/null; then
    echo "SKIPPED: $tool is not installed (the README's test command installs redis-server and nginx)"
    exit 77
  fi
done
work=$(mktemp -d /tmp/gpujit-remote-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  [ -f "$work/nginx/nginx.pid" ] && kill "$(cat "$work/nginx/nginx.pid")" 2>/dev/null
  [ -f "$work/redis.pid" ] && kill "$(cat "$work/redis.pid")" 2>/dev/null
  sleep 0.2
  rm -rf "$work"
}
trap cleanup EXIT
fails=0
check() {
  if eval "$2"; then echo "ok   $1"; else
    echo "FAIL $1"; fails=$((fails + 1))
    [ -n "${out:-}" ] && printf '  exit %s, output:\n%s\n' "${rc:-?}" "$(printf '%s\n' "$out" | tail -8 | sed 's/^/  | /')"
  fi
}
free_port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
export GPUJIT_ARCH=sm_90

# ---- servers
rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --pidfile "$work/redis.pid" --logfile "$work/redis.log" --dir "$work" || exit 1
hport=$(free_port)
mkdir -p "$work/nginx/data" "$work/nginx/tmp"
# nginx's workers may run as another user (www-data when started as root): let them in
chmod 0755 "$work" "$work/nginx"
chmod 0777 "$work/nginx/data" "$work/nginx/tmp"
cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $work/nginx/tmp/body;
  proxy_temp_path $work/nginx/tmp/proxy;
  fastcgi_temp_path $work/nginx/tmp/fastcgi;
  uwsgi_temp_path $work/nginx/tmp/uwsgi;
  scgi_temp_path $work/nginx/tmp/scgi;
  server {
    listen 127.0.0.1:$hport;
    root $work/nginx/data;
    location / { dav_methods PUT; create_full_put_path on; client_max_body_size 256m; }
    location /private/ {
      if (\$http_authorization != "Bearer s3cret-token-42") { return 401; }
      dav_methods PUT; create_full_put_path on; client_max_body_size 256m;
    }
  }
}
CONF
nginx -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" -p "$work/nginx" || { cat "$work/nginx/error.log"; exit 1; }
for i in $(seq 50); do
  redis-cli -p "$rport" ping >/dev/null 2>&1 && curl -s -o /dev/null "http://127.0.0.1:$hport/" && break
  sleep 0.1
done
REDIS="redis://127.0.0.1:$rport/0"
HTTP="http://127.0.0.1:$hport/cache"
cd "$work"

# ---- a second machine hits from each backend, with the same bytes
for backend in "$REDIS" "$HTTP" "$HTTP|layout=bazel"; do
  name=$(echo "$backend" | cut -c1-5)$(echo "$backend" | grep -o 'bazel')
  rm -rf a b
  $G build -q --cache-dir a --remote-cache "$backend" "$EX/block_reduce.cu" -o a.cubin
  out=$($G build --cache-dir b --remote-cache "$backend" "$EX/block_reduce.cu" -o b.cubin 2>&1)
  check "$name: the second cache hits from the server" 'echo "$out" | grep -q " hit "'
  check "$name: the same bytes" 'cmp -s a.cubin b.cubin'
  check "$name: remote hit counted" '$G cache --cache-dir b stats | grep -q "remote    1 hits, 0 misses, 0 errors"'
done
check "bazel layout: stored under /ac/ as 64 hex digits" \
  'ls "$work/nginx/data/cache/ac/" | grep -Eq "^[0-9a-f]{64}$"'

# ---- a checkout built with a relative -I and --base-dir: a copy of it on a second machine hits
# (the header's copy is dumped at its absolute path, which a bundle's checks take)
for backend in "$REDIS" "$HTTP"; do
  name=$(echo "$backend" | cut -c1-5)
  for form in inc ./inc sub/../inc; do
    rm -rf X Y ra rb
    mkdir -p X/src X/inc X/sub
    printf '#include "h.h"\nextern "C" __global__ void k(float *x) { x[threadIdx.x] *= H; }\n' >X/src/k.cu
    printf '#define H 2.0f\n' >X/inc/h.h
    (cd X && $G build -q --cache-dir "$work/ra" --remote-cache "$backend" --base-dir "$work/X" -I "$form" src/k.cu -o k.cubin)
    cp -a X Y
    out=$(cd Y && $G build -v --cache-dir "$work/rb" --remote-cache "$backend" --base-dir "$work/Y" -I "$form" src/k.cu \
          -o hit.cubin 2>&1)
    (cd Y && $G build -q --no-cache --base-dir "$work/Y" -I "$form" src/k.cu -o own.cubin)
    check "$name -I $form: a copied checkout hits from the server" 'echo "$out" | grep -q " hit "'
    check "$name -I $form: nothing refused" '! echo "$out" | grep -q "refused"'
    check "$name -I $form: the header's copy at its absolute path" '[ -n "$(find rb/entries -path "*/src$work/X/inc/h.h")" ]'
    check "$name -I $form: the same bytes as its own compile" 'cmp -s Y/hit.cubin Y/own.cubin'
    check "$name -I $form: the entry is good on the second machine" '$G cache --cache-dir rb verify | grep -q ", 0 bad"'
    printf '#define H 3.0f\n' >Y/inc/h.h
    out=$(cd Y && $G build --cache-dir "$work/rb" --remote-cache "$backend" --base-dir "$work/Y" -I "$form" src/k.cu \
          -o edited.cubin 2>&1)
    check "$name -I $form: its header edited, a miss" 'echo "$out" | grep -q " miss"'
  done
done

# ---- a compile profile travels through the server with its entry
rm -rf a b
$G build -q --cache-dir a --remote-cache "$REDIS" --time-trace=pa.json "$EX/saxpy.cu" -o a.cubin
$G build -q --cache-dir b --remote-cache "$REDIS" --time-trace=pb.json "$EX/saxpy.cu" -o b.cubin
check "profile: a remote hit's trace carries the compile recorded by the first machine" \
  '$G trace analyze pb.json | grep -q "1 cache hit counted with the compile profile recorded"'

# ---- a bearer token from the environment, never printed
rm -rf t1 t2 t3
export GPUJIT_TEST_TOKEN=s3cret-token-42
$G build -q --cache-dir t1 --remote-cache "http://127.0.0.1:$hport/private|bearer-env=GPUJIT_TEST_TOKEN" "$EX/scale.cu" -o t1.cubin
out=$($G build --cache-dir t2 --remote-cache "http://127.0.0.1:$hport/private|bearer-env=GPUJIT_TEST_TOKEN" "$EX/scale.cu" -o t2.cubin 2>&1)
check "bearer token: stored and hit" 'echo "$out" | grep -q " hit " && cmp -s t1.cubin t2.cubin'
out=$($G build -v --cache-dir t3 --remote-cache "http://127.0.0.1:$hport/private|bearer-env=NO_SUCH_VAR" "$EX/scale.cu" -o t3.cubin 2>&1); rc=$?
check "no token: HTTP 401 is an error, the build goes on" '[ $rc = 0 ] && echo "$out" | grep -q "HTTP 401"'
check "the token is never printed" '! echo "$out" | grep -q s3cret && ! grep -rq s3cret t1 t2 t3'
unset GPUJIT_TEST_TOKEN

# ---- read-only consumers never write
rm -rf c
before=$(redis-cli -p "$rport" dbsize)
$G build -q --cache-dir c --remote-cache "$REDIS" --remote-read-only "$EX/saxpy.cu" -o c.cubin
GPUJIT_REMOTE_READ_ONLY=1 $G build -q --cache-dir c2 --remote-cache "$REDIS" "$EX/vecops.cu" -o c2.cubin
check "read-only: nothing written to the server" '[ "$(redis-cli -p "$rport" dbsize)" = "$before" ]'

# ---- 16 processes at once against one server
mkdir -p many
for i in $(seq 16); do
  printf 'extern "C" __global__ void k%d(float *x) { x[threadIdx.x] *= %d.0f; }\n' $i $i >many/k$i.cu
done
for i in $(seq 16); do $G build -q --cache-dir m1 --remote-cache "$REDIS" many/k$i.cu -o many/a$i.cubin & done
wait
for i in $(seq 16); do $G build -q --cache-dir m2/$i --remote-cache "$REDIS" many/k$i.cu -o many/b$i.cubin & done
wait
same=0
for i in $(seq 16); do cmp -s many/a$i.cubin many/b$i.cubin && same=$((same + 1)); done
hits=0
for i in $(seq 16); do $G cache --cache-dir m2/$i stats | grep -q "^hits      1" && hits=$((hits + 1)); done
check "16 processes: every module stored and hit from a fresh cache ($hits of 16), same bytes ($same)" \
  '[ $hits = 16 ] && [ $same = 16 ]'

# ---- the server stopped in the middle of a project build: the build finishes
mkdir -p mid
for i in $(seq 12); do
  printf '#include <cub/block/block_reduce.cuh>\nextern "C" __global__ void m%d(float *x) { using R = cub::BlockReduce<float, 128>; __shared__ typename R::TempStorage s; float v = R(s).Sum(x[threadIdx.x]) * %d; if (!threadIdx.x) x[0] = v; }\n' $i $i >mid/m$i.cu
done
$G build -q -j 2 --cache-dir mc --remote-cache "$REDIS" mid --out-dir midout >mid.log 2>&1 &
bpid=$!
sleep 1.5
kill "$(cat "$work/redis.pid")"; rm -f "$work/redis.pid"
wait $bpid; rc=$?
check "server stopped mid-build: the build succeeds with every output" '[ $rc = 0 ] && [ "$(ls midout | wc -l)" = 12 ]'

# ---- a server that is down: the build goes on, one warning, errors counted
rm -rf d
sleep 0.3
out=$($G build --cache-dir d --remote-cache "$REDIS" "$EX/saxpy.cu" -o d.cubin 2>&1); rc=$?
check "server down: the build succeeds" '[ $rc = 0 ] && [ -s d.cubin ]'
check "server down: one warning" '[ "$(echo "$out" | grep -c "remote cache:")" = 1 ]'
check "server down: errors counted" '$G cache --cache-dir d stats | grep -Eq "remote    0 hits, [0-9]+ misses, [1-9][0-9]* errors"'

# ---- a server that answers with another key's entry: nothing of it is stored, the build compiles
rm -rf w1 w2 "$work/nginx/data/cache/swap"
$G build -q --cache-dir w1 --remote-cache "$HTTP/swap" "$EX/saxpy.cu" -o w_saxpy.cubin
saxpy_obj=$(ls "$work/nginx/data/cache/swap")
$G build -q --cache-dir w1 --remote-cache "$HTTP/swap" "$EX/scale.cu" -o w_scale.cubin
scale_obj=$(ls "$work/nginx/data/cache/swap" | grep -v "^$saxpy_obj$")
cp "$work/nginx/data/cache/swap/$saxpy_obj" "$work/nginx/data/cache/swap/$scale_obj"
out=$($G build --cache-dir w2 --remote-cache "$HTTP/swap" "$EX/scale.cu" -o w2.cubin 2>&1); rc=$?
check "another key's answer: the build compiles" '[ $rc = 0 ] && echo "$out" | grep -q " miss" && cmp -s w_scale.cubin w2.cubin'
check "another key's answer: only the build's own entry is stored" \
  '[ "$($G cache --cache-dir w2 ls | grep -c scale)" = 1 ] && ! $G cache --cache-dir w2 ls | grep -q saxpy'
check "another key's answer: counted as an error, not a hit" '$G cache --cache-dir w2 stats | grep -Eq "remote    0 hits, 1 misses, [1-9]"'

# ---- misbehaving servers: garbage, truncated, oversized, HTTP 500, slow
for mode in garbage truncated oversized error500 slow; do
  python3 "$here/fault_server.py" "$work/port.$mode" "$mode" &
  pids+=($!)
  for i in $(seq 50); do [ -f "$work/port.$mode" ] && break; sleep 0.1; done
  port=$(cat "$work/port.$mode")
  rm -rf f
  start=$(date +%s.%N)
  out=$($G build --cache-dir f --remote-cache "http://127.0.0.1:$port/c|timeout=1500|max-size=1MiB" \
        "$EX/saxpy.cu" -o f.cubin 2>&1); rc=$?
  took=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)")
  check "$mode: the build compiles and succeeds" '[ $rc = 0 ] && echo "$out" | grep -q " miss"'
  check "$mode: counted as an error, not a hit" '$G cache --cache-dir f stats | grep -Eq "remote    0 hits, 1 misses, [1-9]"'
  check "$mode: nothing bad stored" '$G cache --cache-dir f verify | grep -q ", 0 bad"'
  check "$mode: within the timeout (${took}s)" 'python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 4.5 else 1)" "$took"'
done

echo "$fails failed"
[ $fails = 0 ]
