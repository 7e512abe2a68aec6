/* What kernel regions cost, measured side by side: the same kernels built with and without
 * regions, benchmarked in alternated rounds (on, off, on, off, ...) so drift hits both alike.
 * `phases`: 20 regions of fixed FMA work per warp, 32 warps per SM (the recording's stall hidden
 * by other warps, as in most kernels); `spin_phases`: regions that wait a fixed number of cycles,
 * so each event's latency lengthens the kernel (the worst case); `sim_phases`, the shape of the
 * gstaichi guide's kernels: each warp's step is a gather of its particles' neighbours from a
 * 256 MB array (memory-bound) and an integration (FMAs), a region each. Prints RESULT lines: the on/off
 * ratio's median and spread over the rounds, the median region's ns (from the benchmark's own
 * region table), the time each event adds. Without a GPU: exit 77 with the reason.
 *   bench_regions [rounds]   (default 7) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "gpujit.h"

#define ITERS 20 /* regions per warp per launch: 2 events each */
#define SAMPLES 20

static const char SRC[] =
    "#include <gpujit/regions.cuh>\n"
    "extern \"C\" __global__ void phases(int iters, long long work, float *out, const float *in) {\n"
    "  float acc = threadIdx.x;\n"
    "  for (int k = 0; k < iters; k++) GPUJIT_REGION(\"phase\") {\n"
    "    for (long long j = 0; j < work; j++) acc = fmaf(acc, 0.999f, 1.0f);\n"
    "  }\n"
    "  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;\n"
    "}\n"
    "extern \"C\" __global__ void spin_phases(int iters, long long cycles, float *out, const float *in) {\n"
    "  float acc = threadIdx.x;\n"
    "  for (int k = 0; k < iters; k++) GPUJIT_REGION(\"phase\") {\n"
    "    long long t0 = clock64();\n"
    "    while (clock64() - t0 < cycles) acc = acc * 0.999f + 1.0f;\n"
    "  }\n"
    "  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;\n"
    "}\n"
    "extern \"C\" __global__ void sim_phases(int iters, long long work, float *out, const float *in) {\n"
    "  unsigned t = blockIdx.x * blockDim.x + threadIdx.x, nt = gridDim.x * blockDim.x;\n"
    "  float acc = 0.0f, v = 1.0f;\n"
    "  for (int k = 0; k < iters; k++) {\n"
    "    GPUJIT_REGION(\"gather\") {\n"
    "      for (long long j = 0; j < work; j++) acc += __ldg(in + ((t + (unsigned)(j + k * work) * nt) & ((1u << 26) - 1u)));\n"
    "    }\n"
    "    GPUJIT_REGION(\"integrate\") {\n"
    "      for (long long j = 0; j < 32 * work; j++) v = fmaf(v, 0.999f, acc);\n"
    "    }\n"
    "  }\n"
    "  out[t] = acc + v;\n"
    "}\n";
#define SIM_FLOATS (1ull << 26) /* sim_phases' array: 256 MB, past any L2 */

typedef struct sample {
  gpujit_kernel *k;
  unsigned grid[3], block[3];
  void **args;
} sample;

static int launch(void *payload)
{
  sample *s = payload;
  return gpujit_launch(s->k, s->grid, s->block, 0, s->args);
}

static void die(const char *what)
{
  fprintf(stderr, "bench_regions: %s: %s\n", what, gpujit_error_last());
  exit(1);
}

static gpujit_loaded *load(gpujit_device *dev, int regions)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *defs[] = {"GPUJIT_REGIONS"};
  gpujit_source s = {"bench_regions.cu", SRC, sizeof(SRC) - 1};
  gpujit_module *m = NULL;
  gpujit_loaded *l = NULL;
  o.defines = defs, o.defines_count = regions ? 1 : 0;
  if (gpujit_module_build_sources(&m, &s, 1, &o) < 0 || gpujit_module_load(&l, dev, m) < 0)
    die("building the kernels");
  gpujit_module_free(m);
  return l;
}

/* The median sample of one benchmark of `kernel` in `l`; with regions, the median call's ns. */
static gpujit_devptr sim_in; /* sim_phases' array */

static double median_ms(gpujit_device *dev, gpujit_loaded *l, const char *kernel, int sms, long long amount,
                        double *phase_ns)
{
  int iters = ITERS;
  gpujit_devptr out = 0;
  void *args[] = {&iters, &amount, &out, &sim_in};
  sample s = {NULL, {(unsigned)sms * 4, 1, 1}, {256, 1, 1}, args};
  gpujit_bench_options bo = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit_bench_result br;
  const gpujit_region_report *r;
  if (gpujit_kernel_get(&s.k, l, kernel) < 0 || gpujit_mem_alloc(&out, dev, (size_t)sms * 4 * 256 * 4) < 0)
    die(kernel);
  bo.min_samples = bo.max_samples = SAMPLES, bo.min_time_s = 0;
  if (gpujit_benchmark(&br, NULL, dev, launch, &s, &bo) < 0)
    die("benchmark");
  if (phase_ns && (r = gpujit_timing_regions(dev, l)) != NULL && r->dropped)
    fprintf(stderr, "bench_regions: %llu events dropped while timing %s: the figure reads cheaper\n",
            (unsigned long long)r->dropped, kernel);
  if (phase_ns && (r = gpujit_timing_regions(dev, l)) != NULL) /* the shortest region's median */
    for (size_t i = 0; i < r->count; i++)
      if (*phase_ns == 0 || r->regions[i].ns_median < *phase_ns)
        *phase_ns = r->regions[i].ns_median;
  gpujit_mem_free(dev, out);
  return br.gpu.median;
}

/* Alternated rounds of one kernel: the ratio's median, min and max; the medians' on and off. */
static void side_by_side(gpujit_device *dev, gpujit_loaded *on, gpujit_loaded *off, const char *kernel,
                         const char *tag, int sms, long long amount, int rounds)
{
  double *ratio = calloc((size_t)rounds, sizeof(double)), *ons = calloc((size_t)rounds, sizeof(double));
  double *offs = calloc((size_t)rounds, sizeof(double)), *ns = calloc((size_t)rounds, sizeof(double));
  double lo = 1e9, hi = 0, on_med, off_med, r_med, ns_med;
  if (!ratio || !ons || !offs || !ns)
    die("out of memory");
  for (int i = 0; i < rounds; i++) {
    ons[i] = median_ms(dev, on, kernel, sms, amount, &ns[i]);
    offs[i] = median_ms(dev, off, kernel, sms, amount, NULL);
    ratio[i] = ons[i] / offs[i];
    lo = ratio[i] < lo ? ratio[i] : lo, hi = ratio[i] > hi ? ratio[i] : hi;
  }
  r_med = bench_median(ratio, rounds), on_med = bench_median(ons, rounds), off_med = bench_median(offs, rounds);
  ns_med = bench_median(ns, rounds);
  printf("RESULT regions_%scost_ratio %.4f min %.4f max %.4f spread %.4f rounds %d\n", tag, r_med, lo, hi,
         (hi - lo) / r_med, rounds);
  printf("RESULT regions_%scost_on_ms %.6f\nRESULT regions_%scost_off_ms %.6f\n", tag, on_med, tag, off_med);
  printf("RESULT regions_%sphase_ns_median %.0f\n", tag, ns_med);
  /* every warp is resident at once and runs its 2 x ITERS events in sequence: the time each adds */
  printf("RESULT regions_%sevent_cost_ns %.1f\n", tag, (on_med - off_med) * 1e6 / (2.0 * ITERS));
  if (!*tag || !strcmp(tag, "sim_"))
    printf("CHECK regions_bench_%sphase_2us %s median region %.0f ns\n", tag, ns_med >= 2000 ? "ok" : "FAIL", ns_med);
  fflush(stdout);
  free(ratio), free(ons), free(offs), free(ns);
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 7;
  gpujit_device *dev = NULL;
  gpujit_device_info info;
  gpujit_loaded *on, *off;
  int sms;
  if (rounds < 1) {
    fprintf(stderr, "usage: bench_regions [rounds >= 1]\n");
    return 2;
  }
  if (gpujit_device_open(&dev, -1) < 0) {
    printf("SKIPPED: no GPU: %s\n", gpujit_error_last());
    return 77;
  }
  gpujit_device_info_get(dev, &info);
  sms = info.multiprocessors;
  on = load(dev, 1), off = load(dev, 0);
  if (!gpujit_loaded_regions(on) || gpujit_loaded_regions(off))
    die("the module built with regions records none, or the one without does");
  /* room for every sample's events: a dropped event skips its stores and would read cheaper */
  /* and the tails of the chunks the warp slots hold (64 events each, 64 slots a SM, SM ids may skip) */
  if (gpujit_loaded_regions_capacity(on, (uint64_t)sms * 4 * 8 * 4 * ITERS * SAMPLES + (uint64_t)sms * 2 * 64 * 64) < 0)
    die("the regions buffer");
  side_by_side(dev, on, off, "phases", "", sms, 1024, rounds);
  side_by_side(dev, on, off, "spin_phases", "spin_", sms, 6000, rounds);
  if (gpujit_mem_alloc(&sim_in, dev, SIM_FLOATS * 4) < 0)
    die("sim_phases' array");
  side_by_side(dev, on, off, "sim_phases", "sim_", sms, 24, rounds);
  gpujit_mem_free(dev, sim_in);
  gpujit_loaded_free(on), gpujit_loaded_free(off);
  gpujit_device_free(dev);
  return 0;
}
