#!/usr/bin/env bash
# Remote cache hits as whole processes: `gpujit build` of saxpy and block_reduce into a local
# cache that lacks them, served by redis-server and by nginx on loopback, against a local hit.
# "first": into an empty cache (`gpujit cache clear` before each, untimed), which also makes the
# cache's counters and record directories; "steady": into a cache that a sibling module (the same
# source with another comment: the same headers) was fetched into just before, as every module
# after the first of a CI build is. Medians.
# usage: bench/bench_remote.sh [GPUJIT] [REPS]   (target: a remote hit <= 5 ms)
# Times are taken by spawn_ms (posix_spawn + waitpid) beside GPUJIT in the build tree.
set -euo pipefail
G=$(realpath "${1:-build/gpujit}")
SPAWN=$(dirname "$G")/bench/spawn_ms
[ -x "$SPAWN" ] || { echo "bench_remote: $SPAWN not built"; exit 1; }
reps=${2:-21}
EX=$(cd "$(dirname "$0")/../examples" && pwd)
for tool in redis-server nginx python3; do
  command -v $tool >/dev/null || { echo "bench_remote: $tool is not installed"; exit 0; }
done
work=$(mktemp -d /tmp/gpujit-bench-remote-XXXXXX)
chmod 0755 "$work"
cleanup() {
  [ -f "$work/redis.pid" ] && kill "$(cat "$work/redis.pid")" 2>/dev/null
  [ -f "$work/nginx/nginx.pid" ] && kill "$(cat "$work/nginx/nginx.pid")" 2>/dev/null
  sleep 0.2; rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
rport=$(free_port); hport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes --pidfile "$work/redis.pid" \
  --logfile "$work/redis.log" --dir "$work"
mkdir -p "$work/nginx/data" "$work/nginx/tmp"; chmod 0755 "$work/nginx"; chmod 0777 "$work/nginx/data" "$work/nginx/tmp"
cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1; pid $work/nginx/nginx.pid; error_log $work/nginx/error.log;
events { worker_connections 64; }
http { access_log off; client_body_temp_path $work/nginx/tmp/body; proxy_temp_path $work/nginx/tmp/proxy;
  fastcgi_temp_path $work/nginx/tmp/fastcgi; uwsgi_temp_path $work/nginx/tmp/uwsgi; scgi_temp_path $work/nginx/tmp/scgi;
  server { listen 127.0.0.1:$hport; root $work/nginx/data;
    location / { dav_methods PUT; create_full_put_path on; client_max_body_size 256m; } } }
CONF
nginx -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" -p "$work/nginx"
sleep 0.3
export GPUJIT_ARCH=sm_90
cd "$work"
python3 - "$G" "$EX" "$reps" "redis://127.0.0.1:$rport" "http://127.0.0.1:$hport/c" "$SPAWN" <<'PY'
import os, shutil, statistics, subprocess, sys, time
g, ex, reps, redis, http, spawn = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
def run(args):
    out = subprocess.run([spawn, g, "build", "-q"] + args, check=True, capture_output=True, text=True)
    return float(out.stdout)
def clear():
    subprocess.run([g, "cache", "--cache-dir", "fresh", "clear"], check=True, stdout=subprocess.DEVNULL)
rows = []
for mod in ("saxpy", "block_reduce"):
    src = os.path.join(ex, mod + ".cu")
    sib = mod + "_sibling.cu"
    with open(src) as f, open(sib, "w") as o:
        o.write("// a sibling module: the same headers\n" + f.read())
    for name, url in (("redis", redis), ("http", http)):
        for s in (src, sib):  # stored remotely
            run(["--cache-dir", "seed", "--remote-cache", url, s, "-o", "seed.cubin"])
    local, first, steady = [], {"redis": [], "http": []}, {"redis": [], "http": []}
    for i in range(reps):  # interleaved
        local.append(run(["--cache-dir", "seed", src, "-o", "l.cubin"]))
        for name, url in (("redis", redis), ("http", http)):
            clear()
            first[name].append(run(["--cache-dir", "fresh", "--remote-cache", url, src, "-o", "r.cubin"]))
            clear()
            run(["--cache-dir", "fresh", "--remote-cache", url, sib, "-o", "s.cubin"])
            steady[name].append(run(["--cache-dir", "fresh", "--remote-cache", url, src, "-o", "r.cubin"]))
    med = statistics.median
    rows.append((mod, med(local), med(first["redis"]), med(steady["redis"]), med(first["http"]), med(steady["http"])))
print("remote cache hits, whole `gpujit build` processes, medians of %d (target <= 5 ms)" % reps)
print("%-14s %10s %13s %13s %13s %13s" % ("module", "local hit", "redis first", "redis steady", "http first", "http steady"))
for r in rows:
    print("%-14s %7.2f ms %10.2f ms %10.2f ms %10.2f ms %10.2f ms" % r)
print("RESULT " + " ".join("%s_redis_ms=%.2f %s_redis_steady_ms=%.2f %s_http_ms=%.2f %s_http_steady_ms=%.2f"
                           % (r[0], r[2], r[0], r[3], r[0], r[4], r[0], r[5]) for r in rows))
PY
