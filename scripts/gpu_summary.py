"""The short table scripts/gpu.sh prints last, from the logs it left in OUT."""
import csv
import io
import json
import os
import re
import statistics
import sys

out = sys.argv[1]


def read(name):
    try:
        with open(os.path.join(out, name)) as f:
            return f.read()
    except OSError:
        return ""


rows = []
ct = read("ctest.log")
m = re.search(r"\d+% tests passed(, \d+ tests failed)? out of \d+", ct)
rows.append(("ctest", m.group(0) if m else "no result"))
skipped = re.findall(r"Test\s+#\d+: (\S+) .*Skipped", ct)
rows.append(("ctest skipped", ", ".join(skipped) or "none"))

br = read("bench_run.txt")
for label in ("raw cuLaunchKernel", "gpujit_launch, timing off", "gpujit_launch, timing on",
              "added by gpujit, timing off", "added by gpujit, timing on", "raw + event pair",
              "raw + CUPTI (records, id)", "raw + CUPTI records", "gpujit_launch, CUPTI timing",
              "events: gpujit over raw", "cupti: gpujit over raw", "cupti: launch callback"):
    m = re.search(re.escape(label) + r"\s+(-?[\d.]+) µs", br)
    rows.append(("launch: " + label, (m.group(1) + " us") if m else "?"))
for m in re.finditer(r"^RESULT cupti_part_us (\S+) median=(\S+) p25=(\S+) p75=(\S+)", br, re.M):
    rows.append(("launch: cupti part " + m.group(1), "%s us (p25 %s, p75 %s)" % m.group(2, 3, 4)))
m = re.search(r"cupti: first start\s+([\d.]+) ms", br)
if m:
    rows.append(("launch: CUPTI first start", m.group(1) + " ms"))

tv = {}
for line in read("timers.txt").splitlines():
    f = line.split()
    if len(f) == 4 and f[0] == "RESULT":
        try:
            tv[(f[1], f[2])] = float(f[3])
        except ValueError:
            pass
for length in ("fma_short", "fma_mid", "fma_long", "spin_short", "spin_mid", "spin_long"):
    nc = tv.get((length, "ncu"))
    if not nc or nc != nc:
        rows.append(("timers %s: ncu" % length, "no data"))
        continue
    parts = ["ncu %.2f us" % (nc * 1e3)]
    for timer in ("events", "cupti", "cupti-concurrent"):
        v = tv.get((length, timer))
        parts.append("%s %s" % (timer, "%+.1f%%" % (100 * (v - nc) / nc) if v and v == v else "?"))
    rows.append(("timers %s (vs ncu)" % length, ", ".join(parts)))

bc = read("bench_cache.txt")
for label in ("in-process hit, saxpy (API -> module)", "process: gpujit build, default arch (hit)"):
    m = re.search(re.escape(label) + r"\s+([\d.]+)", bc)
    rows.append(("cache: " + label, (m.group(1) + " ms") if m else "?"))
m = re.search(r"^RESULT miss_ratio process_fresh=(\S+) process_in_use=(\S+) in_process=(\S+) in_process_cpu=(\S+)$", bc, re.M)
if m:
    rows.append(("cache: miss / uncached compile", "process %sx (cache in use; fresh cache %sx), in-process %sx wall, "
                 "%sx CPU (target <= 1.02)" % (m.group(2), m.group(1), m.group(3), m.group(4))))

try:
    big = json.loads(read("run_big.json"))
    ev = big["kernels"][0]["gpu_ms"]["median"]
    durs = []
    text = read("ncu_big.csv")
    start = text.find('"ID"')
    for r in csv.DictReader(io.StringIO(text[start:] if start >= 0 else "")):
        if r.get("Metric Name") == "gpu__time_duration.sum":
            v = float(r["Metric Value"].replace(",", ""))
            unit = r.get("Metric Unit", "")
            scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0}
            durs.append(v * scale.get(unit, 1.0))
    if durs:
        nc = statistics.median(durs)
        rows.append(("saxpy 256M: events median", "%.4f ms" % ev))
        rows.append(("saxpy 256M: ncu gpu__time_duration median", "%.4f ms (%d launches)" % (nc, len(durs))))
        rows.append(("saxpy 256M: events / ncu", "%.4f (target within 2%%)" % (ev / nc)))
    else:
        rows.append(("saxpy 256M: ncu", "no ncu data"))
except (ValueError, KeyError, IndexError) as e:
    rows.append(("saxpy 256M", "no data (%s)" % e))

try:
    gb = json.loads(read("run_bench.json"))["benchmark"]
    cp = json.loads(read("cupy.json"))
    rows.append(("saxpy 1M: gpujit --bench GPU median", "%.5f ms (%d samples, %s)" % (
        gb["gpu_ms"]["median"], gb["gpu_ms"]["samples"], gb["stopped_by"])))
    rows.append(("saxpy 1M: cupyx benchmark GPU median", "%.5f ms (%d samples)" % (cp["gpu_median_ms"], cp["samples"])))
    rows.append(("saxpy 1M: gpujit / cupy (GPU)", "%.4f" % (gb["gpu_ms"]["median"] / cp["gpu_median_ms"])))
    rows.append(("saxpy 1M: CPU median gpujit / cupy", "%.5f / %.5f ms" % (gb["cpu_ms"]["median"], cp["cpu_median_ms"])))
except (ValueError, KeyError) as e:
    rows.append(("saxpy 1M bench", "no data (%s)" % e))

m = re.search(r"^RESULT (.*)$", read("bench_project.txt"), re.M)
if m:
    vals = dict(kv.split("=") for kv in m.group(1).split())
    head = read("bench_project.txt").splitlines()[0]
    rows.append(("project: " + head.split(": ", 1)[-1], ""))
    rows.append(("project: cold -j cores / -j 1, no PCH", vals["project_speedup_nopch"] + "x (target >= 0.8 x cores)"))
    rows.append(("project: cold -j cores / -j 1, PCH", vals["project_speedup_pch"] + "x"))
    if "pch_vs_nopch_jn" in vals:
        rows.append(("project: cold PCH / no PCH, -j cores", vals["pch_vs_nopch_jn"] + "x faster (target >= 3x); -j 1 " +
                     vals["pch_vs_nopch_j1"] + "x"))
        rows.append(("project: PCH plan, created / used", "-j cores %s / %s, -j 1 %s / %s" %
                     (vals["pch_created"], vals["pch_used"], vals["pch_created_j1"], vals["pch_used_j1"])))
    ch = re.search(r"^RESULT (pch_chain_make_ms=.*)$", read("bench_project.txt"), re.M)
    if ch:  # what bounds a PCH build at -j cores: a making, then a use
        cv = dict(kv.split("=") for kv in ch.group(1).split())
        rows.append(("project: PCH chain (making + a use, -j 1 compiles)", "%s + %s ms against %s plain: PCH at -j cores "
                     "at most %sx faster than no PCH" % (cv["pch_chain_make_ms"], cv["pch_chain_use_ms"],
                                                         cv["heavy_plain_ms"], cv["pch_jn_bound"])))
        if "pch_second_nvrtc_ms" in cv:
            rows.append(("project: PCH second module's compile", "NVRTC %s + lean pass %s + ptxas process %s ms "
                         "(--no-pch NVRTC %s)" % (cv["pch_second_nvrtc_ms"], cv["pch_second_pass_ms"],
                                                  cv["pch_second_ptxas_ms"], cv["nopch_second_nvrtc_ms"])))
    rows.append(("project: PCH second module / --no-pch", vals["pch_second"] + "x faster (target >= 8x)" +
                 (" (%s against %s ms)" % (vals["pch_second_ms"], vals["nopch_second_ms"]) if "pch_second_ms" in vals else "")))
    pp = re.search(r"^RESULT (nvrtc_pch_second=.*)$", read("bench_pch_pair.txt"), re.M)
    if pp:
        pv = dict(kv.split("=") for kv in pp.group(1).split())
        rows.append(("project: NVRTC alone, second module -pch / none", "%sx faster (%s against %s ms; fork child uses "
                     "the PCH: %s)" % (pv["nvrtc_pch_second"], pv["nvrtc_pch_use_ms"], pv["nvrtc_nopch_ms"],
                                       pv["fork_child_uses_pch"])))
    cr = re.search(r"^RESULT (pch_make_block_cpu=.*)$", read("bench_pch_pair.txt"), re.M)
    if cr:
        cv = dict(kv.split("=") for kv in cr.group(1).split())
        rows.append(("project: PCH making, CPU ms (NVRTC alone)", "from the module %s, from the include block alone %s, "
                     "a use %s, plain %s: chain %sx plain" % (cv["pch_make_module_cpu"], cv["pch_make_block_cpu"],
                                                             cv["pch_use_cpu"], cv["plain_cpu"], cv["pch_chain_floor"])))
        rows.append(("project: PCH file used by another process", "randomisation off %s (CPU %s ms), on %s; "
                     "-fdevice-syntax-only PCH used %s" % (cv["shared_file_used_norand"], cv["shared_use_cpu"],
                                                           cv["shared_file_used_rand"], cv["syntax_only_pch_used"])))
    gp = re.search(r"^RESULT gpujit_pch_second=(\S+) gpujit_pch_second_cpu=(\S+)$", read("bench_pch_pair.txt"), re.M)
    if gp:
        rows.append(("project: gpujit in one process, second module PCH / none", "%sx faster wall, %sx CPU (NVRTC "
                     "alone: %sx CPU)" % (gp.group(1), gp.group(2), pv.get("nvrtc_pch_second_cpu", "?"))))
    rows.append(("project: all cached, whole process", vals["cached_process_ms"] + " ms, fresh outputs " +
                 vals["cached_fresh_out_ms"] + " ms (target <= 30)"))
else:
    rows.append(("project bench", "no data"))

for m in re.finditer(r"^RESULT (\w+) plain_s ([\d.]+) profiled_s ([\d.]+) ratio ([\d.]+) spread (\S+)$",
                     read("steps.txt"), re.M):
    rows.append(("steps: %s profiled / plain" % m.group(1), "%sx (spread %s; target <= 1.02)" % (m.group(4), m.group(5))))
for name in ("steps", "steps_guide"):
    st = read(name + ".txt")
    if st:
        rows.append((name.replace("_", ": ") + " checks", "%d passed, %d failed" % (
            st.count("CHECK PASS"), st.count("CHECK FAIL"))))
ip = read("inproc.txt")
if ip:
    rows.append(("inproc: checks (gpujit.profile in a plain python)",
                 "%d passed, %d failed, %d skipped" % (ip.count("CHECK PASS"), ip.count("CHECK FAIL"), ip.count("SKIP "))))
for m in re.finditer(r"^RESULT two_threads(_unobserved)? raw ([\d.]+) gpujit ([\d.]+)$", read("bench_observe_threads.txt"), re.M):
    how = "unobserved" if m.group(1) else "observed"
    rows.append(("observe: two threads / one, raw NVRTC (%s run)" % how, m.group(2) + "x"))
    rows.append(("observe: two threads / one, gpujit %s" % how, m.group(3) + "x"))
for m in re.finditer(r"^RESULT miss_ratio (\S+) (\S+) wall ([\d.]+) cpu ([\d.]+)$", read("bench_observe.txt"), re.M):
    rows.append(("miss %s: %s" % (m.group(1), m.group(2).replace("_", " ")),
                 "%sx wall, %sx CPU (target <= 1.02)" % (m.group(3), m.group(4))))
for m in re.finditer(r"^RESULT nvrtc_driver_start(_parallel)? driver_over_refused wall ([\d.]+) cpu ([\d.]+) "
                     r"first_ms ([\d.]+) ([\d.]+) refused_loads (\d+) same_cubin (\S+) same_ptx (\S+)$",
                     read("nvrtc_driver_start.txt"), re.M):
    rows.append(("NVRTC's first compile, driver started / refused%s" % (" (all cores at once)" if m.group(1) else ""),
                 "%s vs %s ms = %sx wall, %sx CPU, same cubin: %s, same PTX: %s" % (
                     m.group(4), m.group(5), m.group(2), m.group(3), m.group(7), m.group(8))))
m = re.search(r"^RESULT nvrtc_driver_start_batch children (\d+) driver_ms ([\d.]+) refused_ms ([\d.]+) ratio ([\d.]+)$",
              read("nvrtc_driver_start.txt"), re.M)
if m:
    rows.append(("%s processes' first compiles at once, driver / refused" % m.group(1),
                 "%s vs %s ms = %sx" % (m.group(2), m.group(3), m.group(4))))
for m in re.finditer(r"^RESULT hit_in_process_ms (\S+) saxpy ([\d.]+) block_reduce ([\d.]+) ratio ([\d.]+) "
                     r"cpu_ratio ([\d.]+) spread (\S+)$", read("bench_hit.txt"), re.M):
    rows.append(("in-process hit, block_reduce / saxpy (%s)" % m.group(1).replace("_", " "),
                 "%s / %s ms = %sx, CPU %sx, spread %sx (target <= 1.5)" % (m.group(3), m.group(2), m.group(4),
                                                                          m.group(5), m.group(6))))

m = re.search(r"^RESULT (.*)$", read("bench_remote.txt"), re.M)
if m:
    vals = dict(kv.split("=") for kv in m.group(1).split())
    for mod in ("saxpy", "block_reduce"):
        rows.append(("remote hit %s: redis first/steady" % mod, "%s / %s ms (target <= 5)" % (
            vals[mod + "_redis_ms"], vals[mod + "_redis_steady_ms"])))
        rows.append(("remote hit %s: http first/steady" % mod, "%s / %s ms" % (
            vals[mod + "_http_ms"], vals[mod + "_http_steady_ms"])))
else:
    rows.append(("remote bench", (read("bench_remote.txt").strip().splitlines() or ["no data"])[-1]))

bl = read("bench_lean.txt")
for line in bl.splitlines():
    if line.startswith("ratios (targets)"):
        rows.append(("lean: ratios", line.split(":", 1)[1].strip()))
for name in ("block_reduce lean", "block_reduce --no-lean", "block_reduce nvcc -cubin -lineinfo", "saxpy lean"):
    b = re.search(r"^RESULT bytes " + re.escape(name) + r" (\d+)$", bl, re.M)
    l = re.search(r"^RESULT load_us " + re.escape(name) + r" ([\d.]+)$", bl, re.M)
    rows.append(("lean: " + name, "%s bytes, load %s us" % (b.group(1) if b else "?", l.group(1) if l else "?")))
for line in read("lean_ptx_text.txt").splitlines():
    if line.startswith("PTXTEXT"):
        rows.append(("lean: ptx text", line[8:]))
for line in read("bench_server.txt").splitlines():
    if line.startswith("targets:"):
        rows.append(("server", line[9:]))
    elif line.startswith("project edit loop"):
        rows.append(("server: project edit", " ".join(line.split()[8:])))
for line in read("bench_hit.txt").splitlines():
    if line.startswith(("in-process (", "a server running")):
        f = line.split()
        rows.append(("hit block_reduce/saxpy: " + " ".join(f[:-5]), "%s / %s ms = %s" % (f[-5], f[-3], f[-1])))

for line in read("profile_check.txt").splitlines():
    if line.startswith("CHECKS "):
        rows.append(("profile: GPU checks", line[7:]))
for f in ("profile_overhead.txt", "profile_overhead_mlp.txt", "profile_overhead_fw.txt"):
    for line in read(f).splitlines():
        if line.startswith(("cupy ", "launch_storm", "mlp ", "jax ", "triton ")) and "profile/plain" in line:
            name, rest = line[:22].strip(), line[22:].strip()
            rows.append(("profile overhead: " + name, " ".join(rest.split())[:110]))
        elif line.strip().startswith("CUPTI's floor"):
            rows.append(("profile overhead: CUPTI's floor", line.strip()[line.strip().find("set up"):][:110]))

for line in read("python_tests.txt").splitlines():
    if line.startswith("GPU median:"):
        rows.append(("python: benchmark vs cupyx", line[len("GPU median:"):].strip()))
    elif line.startswith("=") and ("passed" in line or "failed" in line):
        rows.append(("python: pytest", line.strip("= ")))
for line in read("python_launch.txt").splitlines():
    if " us/launch" in line:
        rows.append(("python launch: " + line.split("  ")[0].strip(), line.split("  ", 1)[1].strip()))

for line in read("cupti.txt").splitlines():
    if ":" in line:
        k, v = line.split(":", 1)
        rows.append(("cupti: " + k.strip(), v.strip()))

nc = read("ncu_check.txt")
for line in nc.splitlines():
    if line.startswith("CHECK "):
        parts = line.split(" ", 2)
        rows.append(("ncu: " + parts[1], parts[2] if len(parts) > 2 else ""))

rg = read("regions.txt")
checks = [line.split()[2] for line in rg.splitlines() if line.startswith("CHECK regions_") and len(line.split()) > 2]
if checks:
    failed = [line.split()[1] for line in rg.splitlines() if line.startswith("CHECK regions_") and " FAIL" in line]
    rows.append(("regions: checks", "%d ok of %d%s" % (checks.count("ok"), len(checks),
                                                      ("; FAIL " + ", ".join(failed)) if failed else "")))
res = dict(line.split()[1:3] for line in rg.splitlines() if line.startswith("RESULT ") and len(line.split()) >= 3)
for key, label in (("regions_spin_cycles_median", "spin of 1e6 cycles reads"), ("regions_cost_ratio",
                   "with/without, 3 us regions"), ("regions_event_cost_ns", "cost of one event (ns)"),
                   ("regions_cupti_region_ns", "one-region kernel: region ns"), ("regions_cupti_kernel_ns",
                   "one-region kernel: CUPTI ns")):
    if key in res:
        rows.append(("regions: " + label, res[key]))

rb = read("regions_bench.txt")
for line in rb.splitlines():
    f = line.split()
    if line.startswith("RESULT regions_") and f[1] in ("regions_cost_ratio", "regions_spin_cost_ratio"):
        rows.append(("regions bench: " + ("spin " if "spin" in f[1] else "") + "with/without (median, spread)",
                     " ".join(f[2:])))
    elif line.startswith("RESULT regions_") and f[1] in ("regions_event_cost_ns", "regions_spin_event_cost_ns",
                                                          "regions_phase_ns_median"):
        rows.append(("regions bench: " + f[1][len("regions_"):], f[2]))
    elif line.startswith(("CHECK regions_bench", "SKIPPED")) or "bench_regions:" in line:
        rows.append(("regions bench: check", line))

for line in read("compare_builds.txt").splitlines():
    if line.startswith(("cache hit", "gpujit build", "launch: added", "block_reduce.cu gpujit / nvrtc")):
        f = line.split()
        rows.append(("before/after: " + " ".join(f[:-5]), "old %s  new %s  new/old %s" % (f[-5], f[-4], f[-3])))

# Rows of parts that did not run (scripts/gpu.sh PART...) are left out, not shown as "no data".
SOURCES = (("ctest", "ctest.log"), ("launch:", "bench_run.txt"), ("timers ", "timers.txt"),
           ("cache:", "bench_cache.txt"), ("saxpy 256M", "run_big.json"), ("saxpy 1M", "run_bench.json"),
           ("project", "bench_project.txt"), ("remote", "bench_remote.txt"), ("lean:", "bench_lean.txt"),
           ("observe:", "bench_observe_threads.txt"), ("steps:", "steps.txt"), ("inproc:", "inproc.txt"))
present = set(os.listdir(out))
rows = [r for r in rows if all(f in present for prefix, f in SOURCES if r[0].startswith(prefix))]
print("\n== summary (%s)" % read("gpu.txt").strip())
w = max((len(r[0]) for r in rows), default=0)
for k, v in rows:
    print("%-*s  %s" % (w, k, v))
