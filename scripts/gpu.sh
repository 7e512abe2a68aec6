#!/usr/bin/env bash
# On the GPU machine: build with the carried .deb dependencies, run every test (GPU tests
# included), the benchmarks, the ncu timing comparison, CuPy's benchmark on the same saxpy and
# the Nsight Compute source check; print a short table last. Logs go to $OUT (or /tmp/gpujit-out).
#
#   scripts/gpu.sh            everything (about 15 minutes on an H100)
#   scripts/gpu.sh PART...    the build, then only the parts named, then the table of what they
#                             printed. Parts: build (the build alone) tests bench project (bench's
#                             project builds alone, GPUJIT_PROJECT_REPS reps, 3 unless set) hit observe steps
#                             inproc timing regions profile overhead overhead_fw python main ncu
#                             (inproc: gpujit.profile in a plain python, the package installed as
#                             the part python does; regions: kernel regions' checks and bench_regions, about 2 minutes;
#                             hit: bench_hit and bench/hit_phases.py
#                             alone, with GPUJIT_HIT_RUNS runs a setting, 41 unless set; bench
#                             includes them).
#                             The device tool runs one command for at most 10 minutes, so:
#                             `scripts/gpu.sh tests bench timing` (about 9 minutes on an H100),
#                             `scripts/gpu.sh profile python main ncu`, then
#                             `scripts/gpu.sh overhead` and `scripts/gpu.sh overhead_fw` (each
#                             about 8 minutes).
set -uo pipefail
all_parts="build tests bench project hit observe steps inproc timing regions profile overhead overhead_fw python main ncu"
parts=" ${*:-$all_parts} "
for p in $parts; do
  case " $all_parts " in *" $p "*) ;; *) echo "gpu.sh: unknown part '$p' (parts: $all_parts)" >&2; exit 2 ;; esac
done
part() { case "$parts" in *" $1 "*) return 0 ;; esac; return 1; }
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpujit-out}
mkdir -p "$out"
prefix=/tmp/gpujit-deps
mkdir -p "$prefix"
for f in .deps/*.deb; do dpkg -x "$f" "$prefix"; done
# The servers of the remote-cache tests and benchmark (redis-server, nginx) and the runtime
# libraries gpujit loads for them, where carried in .deps/bench (the GPU host has no registry):
#   (cd .deps/bench && apt-get download redis-server redis-tools libjemalloc2 liblzf1 nginx libhiredis0.14)
for f in .deps/bench/*.deb; do [ -f "$f" ] && dpkg -x "$f" "$prefix"; done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export PATH="$PATH:$prefix/usr/bin:$prefix/usr/sbin"
export GPUJIT_CACHE_DIR=/tmp/gpujit-cache GPUJIT_DEPS_PREFIX="$prefix/usr"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$out/gpu.txt"

echo "== build"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON \
  -DCMAKE_PREFIX_PATH="$prefix/usr" >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
g=build-gpu/gpujit

if part tests; then
echo "== tests"
(cd build-gpu && ctest --output-on-failure -j4 2>&1) | tee "$out/ctest.log" | tail -25

echo "== CUPTI timing (test_cupti's figures)"
build-gpu/tests/test_cupti 2>&1 | grep -E "spin|graph|SKIPPED|FAILED" | tee "$out/cupti.txt"

fi
if part bench; then
echo "== benchmarks"
build-gpu/bench/bench_run 40 | tee "$out/bench_run.txt"
build-gpu/bench/bench_cache 300 30 | tee "$out/bench_cache.txt"
build-gpu/bench/bench_compile 3 | tee "$out/bench_compile.txt" | tail -8
echo "== remote cache hits (redis-server and nginx on loopback)"
bash bench/bench_remote.sh build-gpu/gpujit 21 2>&1 | tee "$out/bench_remote.txt" | tail -5
fi
if part bench || part project; then
echo "== project builds (64 generated modules, -j $(nproc))"
GPUJIT_ARCH= build-gpu/bench/bench_project 64 "$(nproc)" "${GPUJIT_PROJECT_REPS:-3}" | tee "$out/bench_project.txt"
echo "== NVRTC's automatic PCH alone, the same pair (and whether a fork()ed child keeps the PCH)"
build-gpu/bench/bench_pch_pair 5 | tee "$out/bench_pch_pair.txt"
build-gpu/bench/bench_pch_pair 3 gpujit | tee -a "$out/bench_pch_pair.txt"

fi
if part bench || part observe; then
echo "== two threads compiling at once: observed against raw NVRTC; a miss against an uncached compile, observed and not"
build-gpu/bench/bench_observe_threads 7 6 2>&1 | tee "$out/bench_observe_threads.txt"
GPUJIT_BENCH_OBSERVE=0 build-gpu/bench/bench_observe_threads 7 6 2>&1 | tee -a "$out/bench_observe_threads.txt"
build-gpu/bench/bench_observe 9 2>&1 | tee "$out/bench_observe.txt" | grep -E "^(RESULT miss_ratio|target)"
echo "== NVRTC starting the CUDA driver inside a process's first compile: left to it against its dlopen of libcuda refused"
build-gpu/bench/nvrtc_driver_start 15 2>&1 | tee "$out/nvrtc_driver_start.txt"
build-gpu/bench/nvrtc_driver_start 5 "$(nproc)" 2>&1 | tee -a "$out/nvrtc_driver_start.txt"  # as a project build's workers start
fi
if part steps; then
echo "== steps and the schedule: the records of a step loop, its cost side by side, torch.profiler's steps"
python3 tests/profile/gpu/steps.py "$PWD/$g" build-gpu/bench/step_storm "$out" "${GPUJIT_STEP_ROUNDS:-7}" 2>&1 |
  tee "$out/steps.txt" | grep -E "^(CHECK|RESULT)"
if [ "${GPUJIT_STEP_GUIDE:-1}" != 0 ]; then  # GPUJIT_STEP_GUIDE=0: the guide's loop left out
echo "== the gstaichi guide's loop: sync(); profiler.step() with wait=80, warmup=3, active=1; kernel:NAME steps"
PYTHONPATH="$(scripts/gpu_frameworks.sh)${PYTHONPATH:+:$PYTHONPATH}" python3 tests/profile/gpu/steps_guide.py "$PWD/$g" "$out" 2>&1 |
  tee "$out/steps_guide.txt" | grep -E "^(CHECK|SUMMARY|TOP|NOTES)"
fi
fi
if part inproc; then
echo "== gpujit.profile in a plain python (in-process): PyTorch MLP and CuPy RawKernel loops, wait=80,warmup=3,active=1"
scripts/gpu_python.sh "$out" "$prefix" --install-only >"$out/inproc_install.txt" 2>&1 || tail -5 "$out/inproc_install.txt"
PYTHONPATH="/tmp/gpujit-site${PYTHONPATH:+:$PYTHONPATH}" python3 tests/profile/gpu/inproc.py "$out/inproc" 2>&1 |
  tee "$out/inproc.txt" | grep -E "^(CHECK|RESULT|SKIP)"
echo "== the head start and the check's helpers in a Python process building 50 cached modules (the package installed above)"
PYTHONPATH="/tmp/gpujit-site${PYTHONPATH:+:$PYTHONPATH}" python3 bench/bench_head_start.py --gpujit "$g" --python python3 \
  --rounds "${GPUJIT_HEAD_ROUNDS:-9}" 2>&1 | tee -a "$out/inproc.txt" | grep -E "^(RESULT|SKIP|CHECK)"
fi
if part timing; then
echo "== event timing against ncu (saxpy, 256M elements, about 1.2 ms)"
big=(examples/saxpy.cu --grid 1048576 --block 256 --arg i32:268435456 --arg f32:2 --arg buf:f32:268435456:random
     --arg buf:f32:268435456:zeros)
$g run --json --warmup 3 --repeat 30 "${big[@]}" >"$out/run_big.json" 2>"$out/run_big.err" || cat "$out/run_big.err"
ncu --clock-control none --metrics gpu__time_duration.sum -k regex:saxpy --csv \
  $g run -q --warmup 3 --repeat 30 "${big[@]}" >"$out/ncu_big.csv" 2>"$out/ncu_big.err" || tail -5 "$out/ncu_big.err"

fi
if part bench; then
echo "== lean modules: cubin bytes, load and compile against --no-lean and nvcc"
build-gpu/bench/bench_lean 300 5 | tee "$out/bench_lean.txt"
bash scripts/lean_ptx_text.sh "$g" build-gpu/bench/bench_lean "$out" 2>&1 | tee "$out/lean_ptx_text.txt"
echo "== warm build server: the edit loop, a hit, a trivial module"
build-gpu/bench/bench_server 10 21 2>&1 | tee "$out/bench_server.txt"
fi
if part bench || part hit; then
echo "== header-heavy hits: block_reduce against saxpy, whole processes with a server and without, then in one process"
build-gpu/bench/bench_hit "${GPUJIT_HIT_RUNS:-41}" 2>&1 | tee "$out/bench_hit.txt"
echo "== where a hit's time goes: spawn to the group check, the check (begun ahead or not), after it"
python3 bench/hit_phases.py "$g" "${GPUJIT_HIT_RUNS:-41}" 8,2,1 2>&1 | tee "$out/hit_phases.txt"
echo "== the head start and the check's helpers in a user's case: a cached 64-module project at -j cores, a Python process building 50"
py=python3; python3 -c 'import gpujit' 2>/dev/null || py=""
python3 bench/bench_head_start.py --gpujit "$g" ${py:+--python "$py"} --rounds "${GPUJIT_HEAD_ROUNDS:-9}" 2>&1 | tee "$out/bench_head_start.txt"

fi
if part timing; then
echo "== kernel timers against ncu (SM-clock-bound FMA loops and global-timer spins, 3 lengths each)"
bash bench/timers_vs_ncu.sh "$g" "$out" 200 | tee "$out/timers.txt"

echo "== gpujit benchmark against cupyx.profiler.benchmark (saxpy, 1M elements)"
small=(examples/saxpy.cu --grid 4096 --block 256 --arg i32:1048576 --arg f32:2 --arg buf:f32:1048576:random
       --arg buf:f32:1048576:zeros)
$g run --json --bench --noise 0.01 "${small[@]}" >"$out/run_bench.json" 2>&1 || cat "$out/run_bench.json"
python3 bench/cupy_saxpy.py 1048576 examples/saxpy.cu >"$out/cupy.json" 2>"$out/cupy.err" || tail -5 "$out/cupy.err"

echo "== compile vs execute report (text)"
$g run --time-trace="$out/run_trace.json" --timeline "${small[@]}" | tee "$out/run_report.txt" | head -40

if [ -x scripts/ncu_check.sh ]; then
  echo "== Nsight Compute source correlation"
  scripts/ncu_check.sh "$g" "$out" 2>&1 | tee "$out/ncu_check.txt" | tail -30
fi

fi
if part bench; then
echo "== tracks of a traced compile here (NVRTC worker threads get their own)"
$g build --no-cache --time-trace="$out/vecops.trace.json" -o "$out/vecops.cubin" examples/vecops.cu >/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([e['args']['name'] for e in d['traceEvents'] if e.get('ph')=='M'])" "$out/vecops.trace.json"
if [ -f .base/CMakeLists.txt ]; then
  # An older checkout carried in .base/ (git archive OLD | tar -x -C .base): the same benchmarks
  # of both builds, alternating, in one run.
  echo "== before/after: .base (older checkout) against this tree"
  cmake -S .base -B build-base -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON \
    -DCMAKE_PREFIX_PATH="$prefix/usr" -DGPUJIT_TESTS=OFF >"$out/cmake_base.log" 2>&1 &&
    cmake --build build-base -j"$(nproc)" >"$out/build_base.log" 2>&1 &&
    python3 bench/compare_builds.py build-base build-gpu --rounds "${COMPARE_ROUNDS:-3}" --quick \
      2>/dev/null | tee "$out/compare_builds.txt"
fi
fi
if part regions; then
echo "== kernel regions: N cycles, nesting, two streams, CUB, a graph, CUPTI, the cost, a full buffer"
build-gpu/tests/test_regions_gpu 2>&1 | tee "$out/regions.txt" | grep -E "^(CHECK|RESULT|SKIPPED)|FAILED|PASSED"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$cs" ]; then
  TEST_FILTER='*overflow*' "$cs" --tool memcheck --error-exitcode 99 build-gpu/tests/test_regions_gpu \
    >"$out/regions_memcheck.txt" 2>&1
  rc=$?
  echo "CHECK regions_memcheck_overflow $([ $rc -eq 0 ] && echo ok || echo FAIL) exit $rc;" \
    "$(grep -E 'ERROR SUMMARY' "$out/regions_memcheck.txt")" | tee -a "$out/regions.txt"
else
  echo "CHECK regions_memcheck_overflow SKIPPED no compute-sanitizer" | tee -a "$out/regions.txt"
fi
echo "== bench_regions: the cost, with and without regions in alternated rounds"
build-gpu/bench/bench_regions 7 2>&1 | tee "$out/regions_bench.txt" | grep -E "^(CHECK|RESULT|SKIPPED)|bench_regions:"
echo "== regions_micro: the recording path taken apart (each piece's latency and full-GPU cost)"
if command -v nvcc >/dev/null; then
  nvcc -O3 -arch=native -I include -o build-gpu/regions_micro bench/regions_micro.cu >>"$out/regions_bench.txt" 2>&1 &&
    build-gpu/regions_micro 2>&1 | tee -a "$out/regions_bench.txt" | grep -E "^RESULT|SKIPPED|error"
fi
echo "== gpujit run --regions examples/phase_timing.cu: the table, the JSON, the trace"
ex=(examples/phase_timing.cu --grid 1024 --block 128 --arg i32:131072 --arg i32:8 --arg buf:f32:131072:random
    --arg buf:f32:131072:zeros,out=checksum)
$g run --regions --time-trace="$out/regions_run.trace.json" "${ex[@]}" 2>&1 | tee "$out/regions_run.txt" | tail -14
$g run --regions --json "${ex[@]}" >"$out/regions_run.json" 2>&1
python3 - "$out/regions_run.json" "$out/regions_run.trace.json" <<'PY' | tee -a "$out/regions.txt"
import json, sys
d = json.load(open(sys.argv[1]))
names = [r["name"] for r in d.get("regions", {}).get("table", [])]
want = ["line_search", "update_constraint", "hessian_incremental", "update_gradient"]
print("CHECK regions_run_json", "ok" if names == want else "FAIL", names)
reg = d.get("regions", {})
shares = [r.get("share") or 0 for r in reg.get("table", []) if r.get("depth") == 0]
ok = reg.get("unmatched") == 0 and shares and all(0 < x <= 1 for x in shares) and sum(shares) <= 1.02
print("CHECK regions_run_shares", "ok" if ok else "FAIL", "unmatched", reg.get("unmatched"), "dropped",
      reg.get("dropped"), "shares", [round(x, 3) for x in shares], "sum %.3f" % sum(shares))
t = json.load(open(sys.argv[2]))
sm = {e["args"]["name"] for e in t["traceEvents"] if e.get("ph") == "M" and str(e.get("args", {}).get("name", "")).startswith("SM ")}
n = sum(1 for e in t["traceEvents"] if e.get("cat") == "region")
print("CHECK regions_run_trace", "ok" if sm and n else "FAIL", len(sm), "SM tracks,", n, "slices")
PY
$g run "${ex[@]}" 2>&1 | grep -E "^  GPU ms" | sed 's/^/without --regions: /' | tee -a "$out/regions_run.txt"
echo "== gpujit profile reads the regions of an nvcc-built program (its own context, a reset, a schedule)"
python3 tests/profile/gpu/kregions_nvcc.py "$PWD/$g" 2>&1 | tee -a "$out/regions.txt" | grep -E "^CHECK|kernel regions of"
fi
if part profile; then
echo "== gpujit profile: CuPy, PyTorch jiterator, cuda.core, JAX, Triton and gpujit run under it"
mkdir -p /tmp/gpujit-profile-check
# Warp and gstaichi, where their wheels were carried (scripts/gpu_frameworks.sh says how)
fw=$(scripts/gpu_frameworks.sh)
PYTHONPATH="$fw${PYTHONPATH:+:$PYTHONPATH}" \
  python3 tests/profile/gpu/check.py "$PWD/$g" /tmp/gpujit-profile-check 100 >"$out/profile_check.txt" 2>&1
grep -E "^CHECK" "$out/profile_check.txt"
fi
if part overhead; then
echo "== gpujit profile overhead: a million launches side by side, CUPTI's own floor; ten million launches"
OUT="$out" python3 bench/profile_overhead.py "$PWD/$g" build-gpu/bench/launch_storm --rounds 7 \
  --sections storm,floor,memory 2>&1 | tee "$out/profile_overhead.txt"
fi
if part overhead_fw; then
echo "== gpujit profile overhead: a PyTorch MLP (beside torch.profiler), CuPy, JAX and Triton side by side"
mkdir -p "$out/fw" && OUT="$out/fw" python3 bench/profile_overhead.py "$PWD/$g" build-gpu/bench/launch_storm --rounds 7 \
  --sections mlp 2>&1 | tee "$out/profile_overhead_mlp.txt"
OUT="$out/fw" python3 bench/profile_overhead.py "$PWD/$g" build-gpu/bench/launch_storm --rounds 3 \
  --sections cupy,frameworks 2>&1 | tee "$out/profile_overhead_fw.txt"
fi
if part python; then
echo "== the Python package: its tests on CuPy and PyTorch, launch overhead against CuPy's RawKernel"
scripts/gpu_python.sh "$out" "$prefix"
fi
if part main; then
echo "== main job"
scripts/main.sh >"$out/main_job.txt" 2>&1; echo "main job exit $?" >>"$out/main_job.txt"; tail -12 "$out/main_job.txt"
fi
if part ncu; then
echo "== Nsight Compute workflow (docs/nsight-compute.md)"
scripts/ncu_workflow.sh "$g" "$out"
# Samples of ncu's --page source CSV, for the hot-spot parser's fixtures.
for f in "$out"/ncu_*.source.csv; do echo "=== $(basename "$f")"; head -c 6000 "$f"; echo; done >"$out/ncu_source_samples.txt" 2>/dev/null
fi
python3 scripts/gpu_summary.py "$out"
