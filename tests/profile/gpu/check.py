"""GPU checks of `gpujit profile` (run by scripts/gpu.sh on the GPU machine): each framework's
program runs under the profile with N launches; the report must list its module with the
compile that made it and exactly the launches made, and the GPU total must agree with the sum of
CUPTI's own per-launch records in the trace.
Usage: python3 check.py GPUJIT OUTDIR [N] ($GPUJIT_CHECK_ONLY=name,...: those checks alone).
Prints CHECK lines and the tables; exits 1 on a failure."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

g, out = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 100
here = os.path.dirname(os.path.abspath(__file__))
# Fresh caches each run: every framework compiles for real (a CuPy or jiterator cache hit makes no
# NVRTC call).
caches = tempfile.mkdtemp(prefix="caches-", dir=out)
env = dict(os.environ, CUPY_CACHE_DIR=caches + "/cupy", TRITON_CACHE_DIR=caches + "/triton",
           TORCHINDUCTOR_CACHE_DIR=caches + "/inductor",  # else a second run's graph is an FX-cache hit: no autotuning
           PYTORCH_KERNEL_CACHE_PATH=caches + "/torch", XLA_PYTHON_CLIENT_PREALLOCATE="false", GPUJIT_NO_CACHE="1")
failed = 0
last_stdout = ""


def own_measures():
    """OWN <name> <ms> lines a script printed: the framework's own measure of its compiles."""
    return {l.split()[1]: float(l.split()[2]) for l in last_stdout.splitlines() if l.startswith("OWN ")}


def close(a, b):
    """Within 5 % or 2 ms of the framework's own figure."""
    return abs(a - b) <= max(2.0, 0.05 * b)


def framework_row(name, p, origin, unit, own_ms, launches=None):
    m = next((m for m in p["modules"] if m["origin"] == origin and m["name"] == unit), None)
    check(name, m is not None and close(m["compile_ms"], own_ms),
          "%s %s: compile %.1f ms in the report, %.1f ms by its own measure" % (origin, unit, m["compile_ms"] if m else -1, own_ms))
    if launches is not None:
        check(name, m is not None and m["launches"] == launches and m["loads"] >= 1,
              "%s: %s launches from its module (%s loads), made %d" % (unit, m and m["launches"], m and m["loads"], launches))
    if m is not None and m["launches"]:
        real = (m["compile_ms"] + m["load_ms"] + m["autotune_ms"]) / (m["gpu_ms"] / m["launches"])
        check(name, abs(m["break_even_launches"] - real) <= 1e-6 * real + 1,
              "break-even from the real cost: %.0f launches" % m["break_even_launches"])
    return m


def check(name, ok, what):
    global failed
    print("CHECK %s %s: %s" % (name, "PASS" if ok else "FAIL", what))
    failed += not ok


ONLY = set(filter(None, os.environ.get("GPUJIT_CHECK_ONLY", "").split(",")))  # e.g. warp,taichi: those alone


def profile(name, cmd, options=(), timeout=300, fresh_cupy=False):
    if ONLY and name not in ONLY:
        return None, None
    j, t = "%s/%s.json" % (out, name), "%s/%s.trace.json" % (out, name)
    run_env = dict(env, CUPY_CACHE_DIR=tempfile.mkdtemp(prefix="cupy-", dir=caches)) if fresh_cupy else env
    try:
        r = subprocess.run([g, "profile", "--top", "6", "--json", j, "--trace", t] + list(options) + ["--"] + cmd,
                           env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        check(name, False, "still running after %d s" % timeout)
        return None, None
    print("=== %s (exit %d)\n%s" % (name, r.returncode, r.stderr[-3000:]))
    global last_stdout
    last_stdout = r.stdout
    if r.returncode != 0 or not os.path.exists(j):
        check(name, False, "the program ran (exit %d): %s" % (r.returncode, r.stdout[-300:]))
        return None, None
    return json.load(open(j)), json.load(open(t))


def row(p, kernel):
    return next((m for m in p["modules"] if kernel in m["kernel"]), None)


def gpu_agrees(name, p, trace):
    """The profile's kernel time (CUPTI's records summed per buffer) against the sum of the
    per-launch records the trace holds (the same records, one by one)."""
    total = sum(d["kernel_ms"] for d in p["devices"])
    traced = sum(e["dur"] for e in trace["traceEvents"] if e.get("cat") == "kernel") / 1e3
    ok = p["totals"]["untraced"] == 0 and total > 0 and abs(total - traced) <= 0.02 * total
    check(name, ok, "GPU kernel total %.4f ms, per-launch records %.4f ms" % (total, traced))
    tracks = {(e["pid"], e["tid"]) for e in trace["traceEvents"] if e.get("ph") == "M" and e["name"] == "thread_name"}
    streams = [e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M" and e["args"]["name"].startswith("stream")]
    check(name, len(tracks) >= 2 and len(streams) >= 1, "trace tracks: %d named, streams %s" % (len(tracks), streams))


def nvrtc_module(name, p, trace, kernel, launches):
    m = row(p, kernel)
    check(name, m is not None and m["origin"] == "nvrtc" and m["compiles"] >= 1 and m["compile_ms"] > 0,
          "%s: module from an NVRTC compile (%s)" % (kernel, m and (m["origin"], m["compiles"], round(m["compile_ms"], 1))))
    check(name, m is not None and m["launches"] == launches, "%s: %s launches, made %d" % (kernel, m and m["launches"], launches))
    gpu_agrees(name, p, trace)


def run_script(name, script, options=(), timeout=300):
    return profile(name, [sys.executable, os.path.join(here, script), str(n)], options, timeout=timeout)


p, t = run_script("cupy", "cupy_kernels.py")
if p:
    nvrtc_module("cupy", p, t, "gj_scale2", n)
    nvrtc_module("cupy", p, t, "gj_axpb", n)
# A shell that execs the program: the shell's image ended by exec, not abnormally (no PARTIAL).
p, t = profile("cupy-exec", ["sh", "-c", 'exec "$0" "$@"', sys.executable, os.path.join(here, "cupy_kernels.py"), str(n)],
               fresh_cupy=True)
if p:
    nvrtc_module("cupy-exec", p, t, "gj_scale2", n)
    check("cupy-exec", not p["totals"]["partial"], "an image that execs ended normally (partial: %s)" % p["totals"]["partial"])
# A child whose environment dropped gpujit's variables (its own LD_PRELOAD, no injection path):
# they are put back, it is recorded, and the report says so.
p, t = profile("cupy-dropped-env", ["sh", "-c", 'env -u CUDA_INJECTION64_PATH -u GPUJIT_PROFILE_DIR LD_PRELOAD=libm.so.6 '
                                    '"$0" "$@"', sys.executable, os.path.join(here, "cupy_kernels.py"), str(n)],
               fresh_cupy=True)
if p:
    nvrtc_module("cupy-dropped-env", p, t, "gj_scale2", n)
    check("cupy-dropped-env", any("were put back" in x for x in p["notes"]), "the report notes it: %s" % p["notes"][:1])
p, t = run_script("jiterator", "torch_jiterator.py")
if p:
    nvrtc_module("jiterator", p, t, "gj_fused", n)
p, t = run_script("cuda.core", "cuda_core_program.py")
if p:
    nvrtc_module("cuda.core", p, t, "gj_core", n)
p, t = run_script("jax", "jax_jit.py")
if p:
    own = own_measures()
    tot = p["totals"]
    ptxas = next((c for c in p["compilers"] if c["compiler"] == "ptxas"), None)
    check("jax", "jit(f)" in own, "JAX measured its compile of f: %s" % own)
    m = framework_row("jax", p, "xla", "jit(f)", own.get("jit(f)", -1))
    check("jax", m is not None and m["launches"] >= n and m["launches"] % n == 0,
          "jit(f): %s launches for %d calls, in its own row" % (m and m["launches"], n))
    check("jax", ptxas is not None and ptxas["within"] >= 1 and ptxas["compiles"] == 0,
          "ptxas processes inside XLA's compiles: %s" % str(ptxas and (ptxas["within"], round(ptxas["within_ms"], 1))))
    xla = sum(v for k, v in own.items())
    check("jax", close(sum(c["ms"] for c in p["compilers"] if c["compiler"] == "xla"), xla),
          "XLA total %.1f ms in the report, %.1f ms by JAX" % (sum(c["ms"] for c in p["compilers"] if c["compiler"] == "xla"), xla))
    gpu_agrees("jax", p, t)
p, t = run_script("triton", "triton_add.py")
if p:
    own = own_measures()
    check("triton", "gj_add" in own, "Triton measured its compile (its listener, chained): %s" % own)
    framework_row("triton", p, "triton", "gj_add", own.get("gj_add", -1), n)
    inner = [c for c in p["compiles"] if c["kind"] == "ptxas" and c["within"] >= 0]
    check("triton", len(inner) >= 1, "ptxas inside Triton's compile: %d" % len(inner))
    gpu_agrees("triton", p, t)
p, t = run_script("torch.compile", "torch_compile.py", timeout=400)
if p:
    own = own_measures()
    frame = next((m for m in p["modules"] if m["origin"] == "inductor"), None)
    check("torch.compile", frame is not None and "frame" in own and close(frame["compile_ms"], own["frame"]),
          "the graph's compile: %.1f ms in the report, %.1f ms by Dynamo's metrics" % (frame["compile_ms"] if frame else -1, own.get("frame", -1)))
    check("torch.compile", frame is not None and frame["launches"] == n and frame["autotune_launches"] > 0,
          "its kernel: %s launches for %d calls; autotuning's benchmarks apart, as compile work: %s" % (
              frame and frame["launches"], n, frame and frame["autotune_launches"]))
    tri = [c for c in p["compiles"] if c["kind"] == "triton"]
    check("torch.compile", len(tri) >= 1 and all(c["within"] >= 0 for c in tri),
          "Triton's compiles inside the graph's: %d (in processes %s)" % (len(tri), sorted({c["pid"] for c in tri})))
# Rows by content and span, never by order (issue 45): an autotuned Triton kernel, JAX and PyTorch
# in one process, CuPy's nvcc backend, a torch C++/CUDA extension built by ninja, and a compiler
# reached through a #!/bin/sh wrapper.
p, t = run_script("triton-autotune", "triton_autotune.py")
if p:
    tuned = [m for m in p["modules"] if m["kernel"] == "gj_tuned"]
    chosen = max(tuned, key=lambda m: m["launches"]) if tuned else None
    check("triton-autotune", len(tuned) == 4 and chosen["launches"] == n and sum(m["launches"] for m in tuned) == n,
          "4 configs' rows; the program's %d calls all in the chosen one's: %s" % (n, [m["launches"] for m in tuned]))
    check("triton-autotune", all(m["autotune_launches"] > 0 for m in tuned),
          "each config's benchmark launches apart, as its compile work: %s" % [m["autotune_launches"] for m in tuned])
    flush = [m for m in p["modules"] if "FillFunctor" in m["kernel"]]
    check("triton-autotune", all(m["launches"] == 0 for m in flush),
          "do_bench's cache-flush launches are the autotuner's, not the program's: %s" % [(m["kernel"][:40], m["launches"]) for m in flush])
    launched = sum(1 for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel")
    tot = p["totals"]
    check("triton-autotune", tot["launches"] + tot["autotune_launches"] == launched,
          "every launch counted once: %d the program's + %d autotuning = %d in CUPTI's records" % (
              tot["launches"], tot["autotune_launches"], launched))
    own = own_measures()
    check("triton-autotune", "gj_tuned" in own and close(sum(m["compile_ms"] for m in tuned), own["gj_tuned"]),
          "the 4 configs' compiles: %.1f ms in the report, %.1f ms by Triton's listener" % (
              sum(m["compile_ms"] for m in tuned), own.get("gj_tuned", -1)))
    if chosen and chosen["launches"]:
        real = (chosen["compile_ms"] + chosen["load_ms"] + chosen["autotune_ms"]) / (chosen["gpu_ms"] / chosen["launches"])
        check("triton-autotune", abs(chosen["break_even_launches"] - real) <= 1e-6 * real + 1,
              "break-even from the program's launches, autotuning in the cost: %.0f" % chosen["break_even_launches"])
p, t = run_script("jax+torch", "jax_torch.py")
if p:
    own = own_measures()
    m = framework_row("jax+torch", p, "xla", "jit(gj_jax_truth)", own.get("jit(gj_jax_truth)", -1))
    check("jax+torch", m is not None and m["launches"] >= n and m["launches"] % n == 0 and "fusion" in m["kernel"],
          "XLA's fusion kernels in jit(gj_jax_truth)'s row: %s (%s launches)" % (m and m["kernel"], m and m["launches"]))
    torch_rows = [x for x in p["modules"] if "native" in x["kernel"]]  # at::native (the JSON keeps the symbol)
    check("jax+torch", torch_rows and all(x["origin"] == "prebuilt" for x in torch_rows),
          "PyTorch's kernels in prebuilt rows, tied to no XLA compile: %s" % [(x["kernel"][:30], x["origin"]) for x in torch_rows])
    check("jax+torch", p["totals"]["untied"] >= 1, "untied modules counted: %d" % p["totals"]["untied"])
    gpu_agrees("jax+torch", p, t)
p, t = run_script("cupy-nvcc", "cupy_nvcc.py", options=())
if p:
    m = row(p, "gj_nvcc_scale")
    nv = [c for c in p["compiles"] if c["kind"] == "nvcc" and c["within"] < 0 and c["module"] and m and c["module"] == m["name"]]
    check("cupy-nvcc", m is not None and m["origin"] == "nvcc" and m["compiles"] == 1 and m["launches"] == n,
          "one row: nvcc's compile and the %d launches: %s" % (n, m and (m["origin"], m["compiles"], m["launches"])))
    check("cupy-nvcc", m is not None and len(nv) == 1 and close(m["compile_ms"], nv[0]["ms"]),
          "its compile time is nvcc's wall time: %.1f ms" % (m["compile_ms"] if m else -1))
    if m and m["launches"]:
        real = (m["compile_ms"] + m["load_ms"] + m["autotune_ms"]) / (m["gpu_ms"] / m["launches"])
        check("cupy-nvcc", m["break_even_launches"] > 1000 and abs(m["break_even_launches"] - real) <= 1e-6 * real + 1,
              "break-even from nvcc's cost: %.0f launches" % m["break_even_launches"])
p, t = run_script("load_inline", "load_inline_ext.py", timeout=500)
if p:
    m = row(p, "gj_inline_scale")
    tops = [c for c in p["compiles"] if c["within"] < 0]
    nv = [c for c in tops if c["kind"] == "nvcc"]
    host = [c for c in tops if c["kind"] != "nvcc" and "main.cpp" in c["name"]]
    link = [c for c in tops if c["kind"] != "nvcc" and ".so" in c["options"] and "-shared" in c["options"]]
    check("load_inline", m is not None and m["origin"] == "nvcc" and m["launches"] == n and len(nv) == 1 and
          m["compile_ms"] == nv[0]["ms"], "the kernel's module is its nvcc compile's (the fatbin its object embeds), "
          "%d launches: %s" % (n, m and (m["origin"], m["launches"], round(m["compile_ms"], 1))))
    check("load_inline", len(host) == 1 and host[0]["cpu_ms"] > 0 and len(link) == 1,
          "the host C++ compile (%s) and the link (%s) are compiles" % ([(c["kind"], c["name"]) for c in host],
                                                                         [(c["kind"], c["name"]) for c in link]))
    own_ms = float(next((l.split()[1] for l in last_stdout.splitlines() if l.startswith("OWN_BUILD_MS")), -1))
    check("load_inline", max(c["ms"] for c in tops) <= own_ms + 2, "no compile longer than load_inline's own %.0f ms" % own_ms)
if os.access("/opt/gcc/bin/g++", os.X_OK) and (not ONLY or "wrapper" in ONLY):
    src = os.path.join(out, "wrapped.cpp")
    open(src, "w").write("int main(void) { return 0; }\n")
    p, t = profile("wrapper", ["/opt/gcc/bin/g++", "-c", src, "-o", os.path.join(out, "wrapped.o")])
    if p:
        tops = [c for c in p["compiles"] if c["within"] < 0]
        check("wrapper", len(tops) == 1 and tops[0]["kind"] == "g++" and tops[0]["cpu_ms"] > 0,
              "a #!/bin/sh g++ that execs g++-real: one compile, named g++: %s" % [(c["kind"], c["name"]) for c in tops])
        check("wrapper", any(c["kind"] == "cc1plus" for c in p["compiles"] if c["within"] >= 0),
              "cc1plus inside it: %s" % sorted({c["kind"] for c in p["compiles"]}))
# Warp (its NVRTC linked into warp.so) and gstaichi, where installed (the GPU machine has neither:
# scripts/gpu.sh installs them from carried wheels when .deps has them).
def importable(mod):
    return subprocess.run([sys.executable, "-c", "import " + mod], capture_output=True, env=env).returncode == 0


if importable("warp"):
    p, t = profile("warp", [sys.executable, os.path.join(here, "warp_kernel.py"), str(n), os.path.join(caches, "warp")])
    if p:
        own = own_measures()
        unit = next((m for m in p["modules"] if m["origin"] == "warp"), None)
        check("warp", "__main__" in own and unit is not None and close(unit["compile_ms"], own["__main__"]),
              "the module's load: %.1f ms in the report, %.1f ms by Warp's own timer" % (
                  unit["compile_ms"] if unit else -1, own.get("__main__", -1)))
        check("warp", unit is not None and unit["launches"] == n and unit["loads"] >= 1 and "gj_warp_scale" in unit["kernel"],
              "its kernel: %s launches (%s), made %d" % (unit and unit["launches"], unit and unit["kernel"][:40], n))
        gpu_agrees("warp", p, t)
else:
    print("warp: skipped, not installed")
if importable("gstaichi"):
    p, t = profile("taichi", [sys.executable, os.path.join(here, "taichi_kernel.py"), str(n)])
    if p:
        own = own_measures()
        unit = next((m for m in p["modules"] if m["origin"] == "taichi" and m["name"] == "gj_taichi_fill"), None)
        check("taichi", unit is not None and "gj_taichi_fill" in own and close(unit["compile_ms"], own["gj_taichi_fill"]),
              "the kernel's first call: %.1f ms in the report, %.1f ms timed by the program" % (
                  unit["compile_ms"] if unit else -1, own.get("gj_taichi_fill", -1)))
        check("taichi", unit is not None and unit["launches"] >= n and unit["loads"] >= 1,
              "its module (the driver's JIT of its PTX %.1f ms): %s launches for %d calls" % (
                  unit["jit_ms"] if unit else -1, unit and unit["launches"], n))
else:
    print("taichi: skipped, gstaichi not installed")
# PyTorch's profiler links its own CUPTI into libtorch: with --no-cupti gpujit leaves CUPTI to it.
# Its profiler must see every launch (the script exits 3 otherwise); gpujit still lists the
# jiterator compile and its module load.
p, t = run_script("torch-profiler", "torch_profiler.py", ["--no-cupti"])
if p:
    notes = " ".join(p["notes"])
    m = next((m for m in p["modules"] if m["origin"] == "nvrtc" and m["loads"] >= 1), None)
    check("torch-profiler", p["totals"]["exit_status"] == 0, "the program's own profiler saw all %d launches" % n)
    check("torch-profiler", "--no-cupti" in notes, "the report says CUPTI was left: %s" % notes[:160])
    check("torch-profiler", m is not None and m["compiles"] >= 1 and m["load_ms"] > 0,
          "gj_prof: compiled and loaded (%s)" % str(m and (m["name"][-30:], m["compiles"], m["loads"], round(m["load_ms"], 2))))
# A program taking CUPTI through the shared libcupti: gpujit steps aside, the subscription works,
# what was recorded before it stays, and later loads are still recorded.
p, t = run_script("cupti-subscriber", "cupti_subscriber.py")
if p:
    notes = " ".join(p["notes"])
    before = row(p, "gj_before")
    loaded = [m for m in p["modules"] if m["origin"] == "nvrtc" and m["loads"] >= 1]
    check("cupti-subscriber", p["totals"]["exit_status"] == 0, "the program's cuptiSubscribe succeeded")
    check("cupti-subscriber", "took CUPTI" in notes, "gpujit says it stepped aside: %s" % notes[:200])
    check("cupti-subscriber", before is not None and before["launches"] == n,
          "gj_before: %s launches before the program took CUPTI, made %d" % (before and before["launches"], n))
    check("cupti-subscriber", len(loaded) >= 2, "NVRTC modules loaded, before and after: %d" % len(loaded))
# Two GPUs (where the machine has them): both in the device totals, each with its launches.
gpus = subprocess.run([sys.executable, "-c", "import cupy; print(cupy.cuda.runtime.getDeviceCount())"],
                      stdout=subprocess.PIPE, text=True, env=env).stdout.strip()
if gpus.isdigit() and int(gpus) >= 2:
    p, t = run_script("two-gpus", "two_gpus.py")
    if p:
        devs = {d["device"]: d["launches"] for d in p["devices"]}
        m = row(p, "gj_both")
        check("two-gpus", devs.get(0, 0) >= n and devs.get(1, 0) >= n, "launches per device: %s" % devs)
        check("two-gpus", m is not None and m["launches"] == 2 * n and m["loads"] >= 2,
              "gj_both: %s launches on both, made %d; %s loads" % (m and m["launches"], 2 * n, m and m["loads"]))
else:
    print("two-gpus: skipped, %s GPU on this machine" % (gpus or "no"))
# Nsight Compute and gpujit profile together, either way round: the program runs to its end, ncu
# profiles its kernels, gpujit lists the compiles and loads and says CUPTI was ncu's.
ncu = shutil.which("ncu")
if ncu and (not ONLY or ONLY & {"ncu-outer", "ncu-inner"}):
    small = [sys.executable, os.path.join(here, "cupy_kernels.py"), "3"]
    ncu_args = [ncu, "--target-processes", "all", "-k", "regex:gj_scale2", "-c", "2"]
    for name, cmd in (("ncu-outer", ncu_args + [g, "profile", "--json", "%s/ncu-outer.json" % out, "--"] + small),
                      ("ncu-inner", [g, "profile", "--json", "%s/ncu-inner.json" % out, "--"] + ncu_args + small)):
        try:
            fresh = dict(env, CUPY_CACHE_DIR=tempfile.mkdtemp(prefix="cupy-", dir=caches))  # CuPy compiles again
            r = subprocess.run(cmd, env=fresh, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
            text, rc = r.stdout, r.returncode
        except subprocess.TimeoutExpired:
            text, rc = "still running after 240 s", -1
        print("=== %s (exit %d)\n%s" % (name, rc, text[text.find("gpujit profile:"):][:2500]))
        check(name, rc == 0 and "launches gj_scale2 3" in text, "the program ran to its end under ncu (exit %d)" % rc)
        check(name, text.count('Profiling "gj_scale2"') == 2, "ncu profiled its 2 kernels")
        try:
            p = json.load(open("%s/%s.json" % (out, name)))
        except (OSError, ValueError):
            p = None
        m = p and row(p, "gj_scale2") or (p and next((x for x in p["modules"] if x["origin"] == "nvrtc" and x["loads"]), None))
        check(name, p is not None and p["totals"]["compiles"] >= 2 and m is not None and m["loads"] >= 1,
              "gpujit lists the compiles (%s) and an NVRTC module's load" % (p and p["totals"]["compiles"]))
        check(name, p is not None and any("Nsight tool" in x for x in p["notes"]), "the report says CUPTI was Nsight's")
else:
    print("ncu: skipped, not installed")
runs = 1 + 3 + 20  # gpujit run: the first (cold) launch, the warm-ups, the timed runs
p, t = profile("gpujit-run", [g, "run", "-q", "--no-lean", os.path.join(here, "../../../examples/saxpy.cu"), "--grid", "4096",
                              "--block", "256", "--arg", "i32:1048576", "--arg", "f32:2", "--arg", "buf:f32:1048576:random",
                              "--arg", "buf:f32:1048576:zeros", "--warmup", "3", "--repeat", "20"])
if p:
    nvrtc_module("gpujit-run", p, t, "saxpy", runs)
print("CHECKS %s (%d failed)" % ("PASS" if failed == 0 else "FAIL", failed))
sys.exit(1 if failed else 0)
