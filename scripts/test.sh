#!/usr/bin/env bash
# Set up, build and run every test (GPU tests skip, visibly, where there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
cd build
ctest --output-on-failure -j"$(nproc)"
