#!/usr/bin/env bash
# Set up, build and run every test (GPU tests skip, visibly, where there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
# The remote-cache tests start real servers on loopback (skipped, with the reason, without them).
servers=()
command -v redis-server >/dev/null || servers+=(redis-server)
command -v nginx >/dev/null || servers+=(nginx)
if [ ${#servers[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "test: installing ${servers[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${servers[@]}" >/dev/null || true
  # Debian starts the services it installs; the tests start their own on free ports.
  command -v systemctl >/dev/null && systemctl stop nginx redis-server 2>/dev/null || true
  command -v service >/dev/null && { service nginx stop; service redis-server stop; } >/dev/null 2>&1 || true
fi
cd build
set +e
ctest --output-on-failure -j"$(nproc)" 2>&1 | tee ctest.log
rc=${PIPESTATUS[0]}
set -e
# CTest reports a skipped test without its reason: show it.
if grep -q "test_gpu (Skipped)" ctest.log; then
  echo "test_gpu skipped: $(./tests/test_gpu 2>&1 | head -1)"
fi
if grep -q "test_remote (Skipped)" ctest.log; then
  echo "test_remote skipped: $(bash ../tests/remote/run.sh ./gpujit ../examples 2>&1 | head -1)"
fi
exit $rc
