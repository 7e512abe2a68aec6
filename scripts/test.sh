#!/usr/bin/env bash
# Set up, build and run every test (GPU tests skip, visibly, where there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
cd build
set +e
ctest --output-on-failure -j"$(nproc)" 2>&1 | tee ctest.log
rc=${PIPESTATUS[0]}
set -e
# CTest reports a skipped test without its reason: show it.
if grep -q "test_gpu (Skipped)" ctest.log; then
  echo "test_gpu skipped: $(./tests/test_gpu 2>&1 | head -1)"
fi
exit $rc
