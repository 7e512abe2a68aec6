#!/usr/bin/env bash
# Set up, build and run every test (GPU tests skip, visibly, where there is no GPU); then the
# same suite built with AddressSanitizer and UndefinedBehaviorSanitizer, and every fuzz target
# for a bounded time (tests/fuzz/README.md). CI runs this through .ci/run.
#   GPUJIT_TEST_SANITIZE=0    skip the sanitizer build
#   GPUJIT_FUZZ_SECONDS=N     seconds per fuzz target (default 60; 0 skips fuzzing)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
# The remote-cache tests start real servers on loopback (skipped, with the reason, without them);
# the fuzz targets need clang's libFuzzer.
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v nginx >/dev/null || need+=(nginx)
command -v zsh >/dev/null || need+=(zsh)           # the zsh completion's test
command -v groff >/dev/null || need+=(groff-base)  # the man page's lint
# the profile's HTML page rendered in a real browser (tests/profile/html_browser.py)
chromium_bin() { command -v chromium || command -v chromium-browser || command -v google-chrome; } 2>/dev/null
chromium_bin >/dev/null || need+=(chromium)
[ "${GPUJIT_FUZZ_SECONDS:-60}" = 0 ] || command -v clang >/dev/null || need+=(clang)
# the Python package's tests: a venv, and CPython's headers for the extension
python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
python3 -c 'import os, sysconfig; assert os.path.exists(sysconfig.get_paths()["include"] + "/Python.h")' 2>/dev/null ||
  need+=(python3-dev)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "test: installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null || true
  # Debian starts the services it installs; the tests start their own on free ports.
  command -v systemctl >/dev/null && systemctl stop nginx redis-server 2>/dev/null || true
  command -v service >/dev/null && { service nginx stop; service redis-server stop; } >/dev/null 2>&1 || true
fi
# Where this script can install Chromium (root, apt), the browser test must run, not skip.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export GPUJIT_REQUIRE_CHROMIUM=1
fi

# run_suite DIR: ctest with the skipped tests' reasons; returns ctest's status.
run_suite() {
  local dir=$1 rc
  set +e
  (cd "$dir" && ctest --output-on-failure -j"$(nproc)" 2>&1 | tee ctest.log; exit "${PIPESTATUS[0]}")
  rc=$?
  set -e
  # CTest reports a skipped test without its reason: show it.
  for t in test_gpu test_cupti; do
    if grep -q "$t (Skipped)" "$dir/ctest.log"; then
      echo "$t skipped: $("$dir/tests/$t" 2>&1 | head -1)"
    fi
  done
  if grep -q "test_profile_html (Skipped)" "$dir/ctest.log"; then
    echo "test_profile_html skipped: $(python3 tests/profile/html_browser.py "$dir/gpujit" 2>&1 | tail -1)"
  fi
  if grep -q "test_remote (Skipped)" "$dir/ctest.log"; then
    echo "test_remote skipped: $(bash tests/remote/run.sh "$dir/gpujit" examples 2>&1 | head -1)"
  fi
  return $rc
}

rc=0
echo "== the suite"
run_suite build || rc=1

echo "== the Python package: pip install . into a fresh venv, then pytest tests/python"
rm -rf build-venv
if python3 -m venv build-venv && build-venv/bin/pip install -q ".[test]"; then
  (cd tests/python && ../../build-venv/bin/python -m pytest -q .) || rc=1
else
  echo "the Python package did not install"; rc=1
fi

echo "== gpujit with CUDA from NVIDIA's pip wheels alone (the system toolkit hidden)"
scripts/pip_toolkit_test.sh; r=$?
[ "$r" = 0 ] || [ "$r" = 77 ] || rc=1

if [ "${GPUJIT_TEST_SANITIZE:-1}" != 0 ]; then
  echo "== the suite under AddressSanitizer and UndefinedBehaviorSanitizer"
  # Leaks of NVRTC's own are suppressed (tests/lsan.supp); nothing of gpujit's is.
  GPUJIT_CMAKE_ARGS="${GPUJIT_CMAKE_ARGS:-} -DCMAKE_BUILD_TYPE=Debug -DGPUJIT_SANITIZE=address;undefined -DGPUJIT_BENCH=OFF" \
    scripts/setup.sh build-asan
  run_suite build-asan || rc=1
fi

secs=${GPUJIT_FUZZ_SECONDS:-60}
if [ "$secs" != 0 ]; then
  if command -v clang >/dev/null; then
    echo "== fuzzing: every target for ${secs} s"
    GPUJIT_CMAKE_ARGS="${GPUJIT_CMAKE_ARGS:-} -DCMAKE_C_COMPILER=clang -DGPUJIT_FUZZ=ON -DGPUJIT_SANITIZE=address;undefined -DGPUJIT_BENCH=OFF" \
      GPUJIT_BUILD_TARGETS="$(ls tests/fuzz/corpus | sed 's/^/fuzz_/' | tr '\n' ' ')" scripts/setup.sh build-fuzz
    tests/fuzz/run.sh build-fuzz "$secs" || rc=1
  else
    echo "== fuzzing skipped: no clang (apt-get install -y clang)"
  fi
fi
exit $rc
