"""Kernel regions of an nvcc-built program, read by `gpujit profile` (docs/profile.md, "Kernel
regions"): a CUDA runtime program compiled with nvcc, -I$(gpujit --include-dir) -DGPUJIT_REGIONS,
whose kernel has a region "spin" around a spin of N SM cycles, a region "outer" with "inner"
nested in it, and a begin/end region "tail". It runs under `gpujit profile --json --trace` and
prints CHECK lines:
  kregions_names          the regions the profile read are the program's
  kregions_calls          calls per region as the program counts them (launches x warps)
  kregions_spin_cycles    the spin region's median cycles within 1 % of N
  kregions_clean          nothing dropped, nothing unmatched
  kregions_trace          the trace has SM tracks with region slices
  kregions_exit_no_destroy  a program that exits without destroying its context: read at exit
  kregions_context_reset  a program that resets its device (its context destroyed) before exit
  kregions_schedule       --schedule, the program marking steps: only the active step's launches
  kregions_no_cupti       --no-cupti: loads seen by the driver's wrappers, read at exit
It compiles the program wherever nvcc is (this machine without a GPU too) and says SKIPPED, with
the reason, where it cannot run it.

  kregions_nvcc.py GPUJIT_CLI [N_CYCLES]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = r'''
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <cstring>
#include <cuda_runtime.h>
#include <gpujit/regions.cuh>

__device__ __noinline__ void spin(unsigned long long n)
{
  unsigned long long t0 = clock64();
  while (clock64() - t0 < n)
    ;
}

extern "C" __global__ void phases(unsigned long long n, unsigned long long *out)
{
  GPUJIT_REGION("spin") { spin(n); }
  GPUJIT_REGION("outer") {
    GPUJIT_REGION("inner") { spin(n / 4); }
  }
  GPUJIT_REGION_BEGIN("tail");
  spin(n / 8);
  GPUJIT_REGION_END("tail");
  if (threadIdx.x == 0)
    out[blockIdx.x] = clock64();
}

/* A step boundary, as gpujit_profile_step() makes it: the injection library's entry point. */
static void step(void)
{
  void (*fn)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "gpujit_inject_step");
  cudaDeviceSynchronize();
  if (fn)
    fn(0);
}

int main(int argc, char **argv)
{
  unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000ull;
  const char *mode = argc > 2 ? argv[2] : "exit";
  cudaDeviceProp prop;
  unsigned long long *out;
  int blocks, threads = 128, launches = 0;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
    return 3;
  blocks = 2 * prop.multiProcessorCount;
  cudaMalloc(&out, blocks * sizeof(*out));
  if (!strcmp(mode, "schedule")) { /* step 0 (wait): 2 launches; step 1 (active): 3; after it: 2 */
    for (int i = 0; i < 2; i++) phases<<<blocks, threads>>>(n, out);
    step();
    for (int i = 0; i < 3; i++) phases<<<blocks, threads>>>(n, out);
    step();
    for (int i = 0; i < 2; i++) phases<<<blocks, threads>>>(n, out);
    launches = 3;
  } else {
    for (int i = 0; i < 4; i++) phases<<<blocks, threads>>>(n, out);
    launches = 4;
  }
  if (cudaDeviceSynchronize() != cudaSuccess)
    return 4;
  printf("PROGRAM calls %d (launches %d x warps %d)\n", launches * blocks * (threads / 32), launches,
         blocks * (threads / 32));
  fflush(stdout);
  if (!strcmp(mode, "reset"))
    cudaDeviceReset(); /* the context is destroyed before exit */
  return 0; /* "exit": the context is left to the process's end */
}
'''


def check(name, ok, detail):
    print("CHECK %s %s %s" % (name, "ok" if ok else "FAIL", detail), flush=True)


def skipped(reason):
    print("CHECK kregions_nvcc SKIPPED %s" % reason, flush=True)
    sys.exit(0)


def build(g, work):
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.access(nvcc, os.X_OK):
        skipped("no nvcc")
    inc = subprocess.run([g, "--include-dir"], capture_output=True, text=True).stdout.strip()
    if not inc or not os.path.isfile(os.path.join(inc, "gpujit", "regions.cuh")):
        print("CHECK kregions_build FAIL gpujit --include-dir gave %r" % inc)
        sys.exit(1)
    arch = os.environ.get("KREGIONS_ARCH", "90")
    src, exe = os.path.join(work, "app.cu"), os.path.join(work, "app")
    open(src, "w").write(SRC)
    r = subprocess.run([nvcc, "-O2", "-I" + inc, "-DGPUJIT_REGIONS", "-gencode",
                        "arch=compute_%s,code=[sm_%s,compute_%s]" % (arch, arch, arch), "-o", exe, src, "-ldl"],
                       capture_output=True, text=True)
    check("kregions_build", r.returncode == 0, "nvcc -I%s -DGPUJIT_REGIONS sm_%s%s" % (
        inc, arch, "" if r.returncode == 0 else ": " + r.stderr[-400:]))
    if r.returncode:
        sys.exit(1)
    return exe


def profile(g, work, exe, n, mode, extra=()):
    tag = mode + ("-" + extra[0].strip("-") if extra else "")
    js, tr = os.path.join(work, tag + ".json"), os.path.join(work, tag + ".trace.json")
    r = subprocess.run([g, "profile", "--json=" + js, "--trace", tr, *extra, "--", exe, str(n), mode],
                       capture_output=True, text=True, timeout=600)
    want = 0
    for line in r.stdout.splitlines():
        if line.startswith("PROGRAM calls"):
            want = int(line.split()[2])
    try:
        d = json.load(open(js))
    except (OSError, ValueError) as e:
        print("CHECK kregions_%s FAIL no JSON (%s): exit %d %s" % (mode, e, r.returncode, r.stderr[-600:]))
        return None, None, want
    try:
        t = json.load(open(tr))["traceEvents"]
    except (OSError, ValueError):
        t = []
    return d, t, want


def rows_of(d):
    return {r["region"]: r for r in d.get("kernel_regions", []) if r["region"]}


def main():
    g = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    work = tempfile.mkdtemp(prefix="gpujit-kregions-")
    exe = build(g, work)
    if not (os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl")):
        skipped("no GPU here (the program compiled)")
    d, t, want = profile(g, work, exe, n, "exit")
    if d is None:
        sys.exit(1)
    rows = rows_of(d)
    check("kregions_names", sorted(rows) == ["inner", "outer", "spin", "tail"], sorted(rows))
    calls = {k: v["calls"] for k, v in rows.items()}
    check("kregions_calls", want > 0 and all(c == want for c in calls.values()), "program %d, profile %s" % (want, calls))
    spin = rows.get("spin", {})
    med = spin.get("cycles_median", 0)
    check("kregions_spin_cycles", abs(med - n) <= 0.01 * n, "median %.0f mean %.0f p99 %.0f of N %d" % (
        med, spin.get("cycles_mean", 0), spin.get("cycles_p99", 0), n))
    check("kregions_nesting", rows.get("inner", {}).get("depth") == 1 and rows.get("outer", {}).get("depth") == 0,
          "inner depth %s outer depth %s" % (rows.get("inner", {}).get("depth"), rows.get("outer", {}).get("depth")))
    check("kregions_clean", spin.get("dropped") == 0 and spin.get("unmatched") == 0,
          "dropped %s unmatched %s events %s launches %s reads %s" % (spin.get("dropped"), spin.get("unmatched"),
                                                                   spin.get("events"), spin.get("launches"), spin.get("reads")))
    sms = {e["args"]["name"] for e in t if e.get("ph") == "M" and str(e.get("args", {}).get("name", "")).startswith("SM ")}
    slices = [e for e in t if e.get("cat") == "region"]
    check("kregions_trace", bool(sms) and bool(slices), "%d SM tracks, %d region slices" % (len(sms), len(slices)))
    gone = [x for x in d.get("notes", []) if "was gone" in x]
    check("kregions_exit_no_destroy", bool(rows) and not gone and d["totals"]["exit_status"] == 0,
          "read at exit; notes %s" % gone)
    d2, _, want2 = profile(g, work, exe, n, "reset")
    rows2 = rows_of(d2) if d2 else {}
    check("kregions_context_reset", rows2.get("spin", {}).get("calls") == want2 and d2["totals"]["exit_status"] == 0,
          "spin calls %s of %d; notes %s" % (rows2.get("spin", {}).get("calls"), want2,
                                             [x for x in (d2 or {}).get("notes", []) if "region" in x]))
    d3, _, want3 = profile(g, work, exe, n, "schedule",
                           ("--step", "api", "--schedule", "wait=1,warmup=0,active=1,repeat=1"))
    rows3 = rows_of(d3) if d3 else {}
    s3 = rows3.get("spin", {})
    check("kregions_schedule", s3.get("calls") == want3 and s3.get("launches") == 3,
          "spin calls %s of %d (the active step's 3 launches), launches %s, reads %s" % (
              s3.get("calls"), want3, s3.get("launches"), s3.get("reads")))
    d4, _, want4 = profile(g, work, exe, n, "exit", ("--no-cupti",))
    s4 = rows_of(d4).get("spin", {}) if d4 else {}
    check("kregions_no_cupti", s4.get("calls") == want4,
          "spin calls %s of %d (loads through the driver's wrappers, read at exit)" % (s4.get("calls"), want4))
    text = subprocess.run([g, "profile", "--", exe, str(n), "exit"], capture_output=True, text=True).stdout
    print("\n".join(l for l in text.splitlines() if l.startswith("  kernel regions") or l.startswith("    ")))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
