/* Kernel regions on the GPU (scripts/gpu.sh regions): a spin of N cycles reads N, nesting and
 * loops, two streams at once, CUB inside a region, a graph, agreement with CUPTI, the cost, and a
 * full buffer (run under compute-sanitizer by gpu.sh). Each check prints a CHECK line; figures
 * print RESULT lines. Without a driver or device: exit 77 (skipped) with the reason. */
#include <math.h>

#include "helpers.h"

#include "gpujit.h"

#define SRC                                                                                             \
  "#include <gpujit/regions.cuh>\n"                                                                     \
  "#include <cub/block/block_reduce.cuh>\n"                                                             \
  "static __device__ void spin_for(long long c) { long long t0 = clock64(); while (clock64() - t0 < c) {} }\n" \
  "extern \"C\" __global__ void spin(long long cycles, int *out) {\n"                                   \
  "  GPUJIT_REGION(\"spin\") { spin_for(cycles); }\n"                                                   \
  "  if (threadIdx.x == 0) out[blockIdx.x] = 1;\n"                                                      \
  "}\n"                                                                                                 \
  "extern \"C\" __global__ void nested(int reps, long long cycles, int *out) {\n"                       \
  "  GPUJIT_REGION(\"outer\") {\n"                                                                      \
  "    for (int r = 0; r < reps; r++) GPUJIT_REGION(\"inner\") { spin_for(cycles); }\n"                 \
  "  }\n"                                                                                               \
  "  GPUJIT_REGION_BEGIN(\"after\"); spin_for(cycles); GPUJIT_REGION_END(\"after\");\n"                 \
  "  if (threadIdx.x == 0) out[blockIdx.x] = reps;\n"                                                   \
  "}\n"                                                                                                 \
  "static __device__ unsigned long long gt_halves(void) { unsigned int h, l;\n"                          \
  "  asm volatile(\"mov.u32 %0, %%globaltimer_hi;\" : \"=r\"(h));\n"                                    \
  "  asm volatile(\"mov.u32 %0, %%globaltimer_lo;\" : \"=r\"(l));\n"                                    \
  "  return (unsigned long long)h << 32 | l; }\n"                                                       \
  "extern \"C\" __global__ void gtimer(long long cycles, unsigned long long *t) {\n"                    \
  "  unsigned long long a, b, ha, hb; long long c0, c1;\n"                                              \
  "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(a)); ha = gt_halves(); c0 = clock64();\n"     \
  "  spin_for(cycles);\n"                                                                              \
  "  c1 = clock64(); asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(b)); hb = gt_halves();\n"     \
  "  if (threadIdx.x == 0) { t[0] = a; t[1] = b; t[2] = (unsigned long long)(c1 - c0); t[3] = ha; t[4] = hb; }\n" \
  "}\n"                                                                                                 \
  "extern \"C\" __global__ void diverge(long long cycles, int *out) {\n"                                 \
  "  GPUJIT_REGION(\"ragged\") { spin_for(cycles * (1 + threadIdx.x % 32)); }\n"                           \
  "  if (threadIdx.x % 2) { GPUJIT_REGION(\"odd\") { spin_for(cycles); } }\n"                              \
  "  else { GPUJIT_REGION(\"even\") { spin_for(2 * cycles); } }\n"                                         \
  "  if (threadIdx.x == 0) out[blockIdx.x] = 1;\n"                                                      \
  "}\n"                                                                                                 \
  "extern \"C\" __global__ void reduce(int n, const float *in, float *partial) {\n"                     \
  "  using R = cub::BlockReduce<float, 256>;\n"                                                         \
  "  __shared__ typename R::TempStorage st;\n"                                                          \
  "  int i = blockIdx.x * 256 + threadIdx.x;\n"                                                         \
  "  float v = i < n ? in[i] : 0.0f, s = 0.0f;\n"                                                       \
  "  GPUJIT_REGION(\"block_reduce\") { s = R(st).Sum(v); }\n"                                           \
  "  if (threadIdx.x == 0) partial[blockIdx.x] = s;\n"                                                  \
  "}\n"                                                                                                 \
  "extern \"C\" __global__ void phases(int iters, long long work, float *out) {\n"                      \
  "  float acc = threadIdx.x;\n"                                                                        \
  "  for (int k = 0; k < iters; k++) GPUJIT_REGION(\"phase\") {\n"                                      \
  "    for (long long j = 0; j < work; j++) acc = fmaf(acc, 0.999f, 1.0f);\n"                           \
  "  }\n"                                                                                               \
  "  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;\n"                                               \
  "}\n"                                                                                                 \
  "extern \"C\" __global__ void spin_phases(int iters, long long cycles, float *out) {\n"               \
  "  float acc = threadIdx.x;\n"                                                                        \
  "  for (int k = 0; k < iters; k++) GPUJIT_REGION(\"phase\") {\n"                                      \
  "    long long t0 = clock64();\n"                                                                     \
  "    while (clock64() - t0 < cycles) acc = acc * 0.999f + 1.0f;\n"                                    \
  "  }\n"                                                                                               \
  "  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;\n"                                               \
  "}\n"

static gpujit_device *dev;
static gpujit_module *mod, *mod_off;
static gpujit_loaded *loaded;
static gpujit_devptr out;
static int sms;

static void check(const char *name, bool ok, const char *fmt, ...)
{
  va_list ap;
  printf("CHECK regions_%s %s ", name, ok ? "ok" : "FAIL");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  assert_true(ok);
}

static gpujit_kernel *kernel_of(gpujit_loaded *l, const char *name)
{
  gpujit_kernel *k = NULL;
  assert_int_equal(gpujit_kernel_get(&k, l, name), 0);
  return k;
}

static void launch_spin(gpujit_loaded *l, unsigned blocks, unsigned threads, long long cycles)
{
  unsigned grid[3] = {blocks, 1, 1}, block[3] = {threads, 1, 1};
  void *args[] = {&cycles, &out};
  assert_int_equal(gpujit_launch(kernel_of(l, "spin"), grid, block, 0, args), 0);
}

static const gpujit_region_stat *row(const gpujit_region_report *r, const char *name)
{
  char *table = NULL;
  for (size_t i = 0; i < r->count; i++)
    if (!strcmp(r->regions[i].name, name))
      return &r->regions[i];
  if (gpujit_region_report_format(&table, r) == 0) /* what was recorded instead */
    printf("%s", table);
  free(table);
  fail_msg("no region '%s' in the report", name);
  return NULL;
}

static gpujit_region_report *read_regions(gpujit_loaded *l, double kernel_ms, unsigned launches)
{
  gpujit_region_report *r = NULL;
  if (gpujit_loaded_regions_read(&r, l, kernel_ms, launches) < 0)
    fail_msg("reading the regions: %s", gpujit_error_last());
  return r;
}

/* One warp spinning N SM cycles: the region reads N within 1 %. */
static void test_regions__spin_reads_n_cycles(void **state)
{
  const long long n = 1000000;
  gpujit_region_report *r;
  const gpujit_region_stat *s;
  (void)state;
  assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
  launch_spin(loaded, (unsigned)sms, 128, n);
  r = read_regions(loaded, 0, 1);
  s = row(r, "spin");
  printf("RESULT regions_spin_cycles_median %.0f\nRESULT regions_spin_cycles_max %.0f\n", s->cycles_median,
         s->cycles_max);
  check("spin_n_cycles", s->calls == (uint64_t)sms * 4 && fabs(s->cycles_median - (double)n) / (double)n < 0.01,
        "calls %llu (want %d) median %.0f cycles for %lld", (unsigned long long)s->calls, sms * 4, s->cycles_median, n);
  check("spin_all_sms", s->sms == (unsigned)sms || s->sms > (unsigned)sms / 2, "%u SMs ran it (%d blocks)", s->sms, sms);
  check("spin_one_begin_one_end", r->unmatched == 0 && r->events == (uint64_t)sms * 4 * 2 && r->dropped == 0,
        "%llu events (want %d), unmatched %llu, dropped %llu", (unsigned long long)r->events, sms * 8,
        (unsigned long long)r->unmatched, (unsigned long long)r->dropped);
  /* %globaltimer advances with the cycles: between 0.5 and 3 GHz */
  printf("RESULT regions_spin_ns_median %.0f\n", s->ns_median);
  check("spin_ns", s->ns_median >= (double)n / 3.0 && s->ns_median <= (double)n / 0.5,
        "median %.0f ns for %lld cycles", s->ns_median, n);
  gpujit_region_report_free(r);
}

/* inner x reps inside outer, then a begin/end region: depths, counts, outer >= its inners. */
static void test_regions__nested_and_looped(void **state)
{
  int reps = 5;
  long long cycles = 20000;
  unsigned grid[3] = {4, 1, 1}, block[3] = {64, 1, 1};
  void *args[] = {&reps, &cycles, &out};
  gpujit_region_report *r;
  const gpujit_region_stat *o, *in, *af;
  (void)state;
  assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
  assert_int_equal(gpujit_launch(kernel_of(loaded, "nested"), grid, block, 0, args), 0);
  r = read_regions(loaded, 0, 1);
  o = row(r, "outer"), in = row(r, "inner"), af = row(r, "after");
  check("nested_counts", o->calls == 8 && in->calls == 40 && af->calls == 8 && r->unmatched == 0,
        "outer %llu inner %llu after %llu unmatched %llu", (unsigned long long)o->calls, (unsigned long long)in->calls,
        (unsigned long long)af->calls, (unsigned long long)r->unmatched);
  check("nested_depths", o->depth == 0 && in->depth == 1 && af->depth == 0, "depths %u %u %u", o->depth, in->depth,
        af->depth);
  check("nested_outer_ge_inners", o->cycles_median >= 5 * in->cycles_median, "outer %.0f, 5 x inner %.0f",
        o->cycles_median, 5 * in->cycles_median);
  gpujit_region_report_free(r);
}

/* The hardware alone, no regions: %globaltimer read before and after a spin of 20 M cycles advances
 * by about the spin's time. The first H200 run read regions around spins of milliseconds as 0-32 ns
 * while their cycles were right: this says whether the timer or the recording was at fault. */
static void test_regions__globaltimer_advances(void **state)
{
  long long cycles = 20000000;
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  gpujit_devptr t;
  unsigned long long h[5] = {0, 0, 0, 0, 0};
  void *args[] = {&cycles, &t};
  (void)state;
  assert_int_equal(gpujit_mem_alloc(&t, dev, sizeof(h)), 0);
  assert_int_equal(gpujit_launch(kernel_of(loaded, "gtimer"), grid, block, 0, args), 0);
  assert_int_equal(gpujit_memcpy_dtoh(dev, h, t, sizeof(h)), 0);
  gpujit_mem_free(dev, t);
  /* the 64-bit read (layout 1's) and the two halves (layout 2's) */
  printf("RESULT regions_globaltimer_spin_ns %llu\nRESULT regions_globaltimer_halves_spin_ns %llu\n"
         "RESULT regions_globaltimer_spin_cycles %llu\n", h[1] - h[0], h[4] - h[3], h[2]);
  check("globaltimer_advances", h[1] > h[0] && (double)(h[1] - h[0]) >= (double)h[2] / 3.0 && h[4] > h[3] &&
                                    (double)(h[4] - h[3]) >= (double)h[2] / 3.0,
        "%llu ns (64-bit read), %llu ns (halves) over %llu cycles", h[1] - h[0], h[4] - h[3], h[2]);
}

/* Lanes that leave a region apart (each spins its own length) and a region in each side of an
 * if/else: one call per warp for the first, one per warp and side for the others, none unmatched
 * (the end is the begin's recording lane's, so a diverged warp writes one end per begin). */
static void test_regions__diverged_lanes(void **state)
{
  long long cycles = 2000;
  unsigned grid[3] = {2, 1, 1}, block[3] = {64, 1, 1};
  void *args[] = {&cycles, &out};
  gpujit_region_report *r;
  (void)state;
  assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
  assert_int_equal(gpujit_launch(kernel_of(loaded, "diverge"), grid, block, 0, args), 0);
  r = read_regions(loaded, 0, 1);
  check("diverged_lanes", row(r, "ragged")->calls == 4 && row(r, "odd")->calls == 4 && row(r, "even")->calls == 4 &&
                              r->unmatched == 0,
        "ragged %llu odd %llu even %llu (want 4 each) unmatched %llu", (unsigned long long)row(r, "ragged")->calls,
        (unsigned long long)row(r, "odd")->calls, (unsigned long long)row(r, "even")->calls,
        (unsigned long long)r->unmatched);
  printf("RESULT regions_ragged_cycles_median %.0f (lane 0 spins %lld, lane 31 %lld)\n", row(r, "ragged")->cycles_median,
         cycles, 32 * cycles);
  gpujit_region_report_free(r);
}

/* Two loaded modules, each its own buffer, on two streams at once: each sees its own calls, and
 * their times overlap. */
static void test_regions__two_streams_at_once(void **state)
{
  gpujit_device *dev2 = NULL;
  gpujit_loaded *l2 = NULL;
  gpujit_region_report *a, *b;
  uint64_t a0 = UINT64_MAX, a1 = 0, b0 = UINT64_MAX, b1 = 0;
  (void)state;
  assert_int_equal(gpujit_device_open(&dev2, -1), 0);
  assert_int_equal(gpujit_module_load(&l2, dev2, mod), 0);
  assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
  assert_int_equal(gpujit_loaded_regions_reset(l2), 0);
  assert_int_equal(gpujit_synchronize(dev), 0);
  assert_int_equal(gpujit_synchronize(dev2), 0);
  launch_spin(loaded, 2, 64, 20000000); /* about 10 ms each */
  launch_spin(l2, 2, 64, 20000000);
  a = read_regions(loaded, 0, 1), b = read_regions(l2, 0, 1);
  for (size_t i = 0; i < a->nslices; i++)
    a0 = a->slices[i].start_ns < a0 ? a->slices[i].start_ns : a0,
    a1 = a->slices[i].start_ns + a->slices[i].dur_ns > a1 ? a->slices[i].start_ns + a->slices[i].dur_ns : a1;
  for (size_t i = 0; i < b->nslices; i++)
    b0 = b->slices[i].start_ns < b0 ? b->slices[i].start_ns : b0,
    b1 = b->slices[i].start_ns + b->slices[i].dur_ns > b1 ? b->slices[i].start_ns + b->slices[i].dur_ns : b1;
  printf("RESULT regions_streams_overlap_ns %lld\n", (long long)((a1 < b1 ? a1 : b1) - (a0 > b0 ? a0 : b0)));
  check("two_streams_counts", row(a, "spin")->calls == 4 && row(b, "spin")->calls == 4, "%llu and %llu calls",
        (unsigned long long)row(a, "spin")->calls, (unsigned long long)row(b, "spin")->calls);
  check("two_streams_overlap", a0 < b1 && b0 < a1, "A [%llu, %llu] B [%llu, %llu] ns", (unsigned long long)a0,
        (unsigned long long)a1, (unsigned long long)b0, (unsigned long long)b1);
  gpujit_region_report_free(a), gpujit_region_report_free(b);
  gpujit_loaded_free(l2);
  gpujit_device_free(dev2);
}

/* CUB's BlockReduce inside a region: the sums right, one call per warp. */
static void test_regions__cub_block_reduce(void **state)
{
  int n = 256 * 64;
  unsigned grid[3] = {64, 1, 1}, block[3] = {256, 1, 1};
  gpujit_devptr in, partial;
  float ones[256 * 64], sums[64];
  void *args[] = {&n, &in, &partial};
  gpujit_region_report *r;
  bool right = true;
  (void)state;
  for (int i = 0; i < n; i++)
    ones[i] = 1.0f;
  assert_int_equal(gpujit_mem_alloc(&in, dev, sizeof(ones)), 0);
  assert_int_equal(gpujit_mem_alloc(&partial, dev, sizeof(sums)), 0);
  assert_int_equal(gpujit_memcpy_htod(dev, in, ones, sizeof(ones)), 0);
  assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
  assert_int_equal(gpujit_launch(kernel_of(loaded, "reduce"), grid, block, 0, args), 0);
  assert_int_equal(gpujit_memcpy_dtoh(dev, sums, partial, sizeof(sums)), 0);
  for (int b = 0; b < 64; b++)
    right = right && sums[b] == 256.0f;
  r = read_regions(loaded, 0, 1);
  check("cub_block_reduce", right && row(r, "block_reduce")->calls == 64 * 8 && r->unmatched == 0,
        "sums %s, %llu calls (want 512), median %.0f cycles", right ? "right" : "WRONG",
        (unsigned long long)row(r, "block_reduce")->calls, row(r, "block_reduce")->cycles_median);
  gpujit_region_report_free(r);
  gpujit_mem_free(dev, in), gpujit_mem_free(dev, partial);
}

/* A captured graph launched three times: its kernel writes through the bound buffer as any. */
static void test_regions__graph_launch(void **state)
{
  gpujit_graph *g = NULL;
  gpujit_region_report *r;
  (void)state;
  assert_int_equal(gpujit_graph_begin(dev), 0);
  launch_spin(loaded, 2, 64, 10000);
  assert_int_equal(gpujit_graph_end(&g, dev, "regions graph"), 0);
  assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(gpujit_graph_launch(g), 0);
  r = read_regions(loaded, 0, 3);
  check("graph_launch", row(r, "spin")->calls == 3 * 4, "%llu calls (want 12)", (unsigned long long)row(r, "spin")->calls);
  gpujit_region_report_free(r);
  gpujit_graph_free(g);
}

/* A kernel that is one region of one warp: the region's time against the kernel's CUPTI duration. */
static void test_regions__agrees_with_cupti(void **state)
{
  gpujit_timing_result *res = NULL;
  size_t nres = 0;
  gpujit_region_report *r;
  double kernel_ns, region_ns;
  int cupti = gpujit_timing_set_source(dev, GPUJIT_TIMER_CUPTI) == 0;
  (void)state;
  assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_KERNEL), 0);
  launch_spin(loaded, 1, 32, 4000000);
  assert_int_equal(gpujit_timing_end(&res, &nres, dev), 0);
  assert_int_equal(nres, 1);
  kernel_ns = res[0].elapsed_ms * 1e6;
  r = read_regions(loaded, res[0].elapsed_ms, 1);
  region_ns = row(r, "spin")->ns_max;
  printf("RESULT regions_cupti_kernel_ns %.0f\nRESULT regions_cupti_region_ns %.0f\nRESULT regions_cupti_share %.4f\n",
         kernel_ns, region_ns, row(r, "spin")->share);
  check("agrees_with_cupti", region_ns <= kernel_ns * 1.001 && region_ns >= kernel_ns * 0.97,
        "region %.0f ns, kernel %.0f ns (%s)", region_ns, kernel_ns, cupti ? "cupti" : "events: CUPTI unavailable");
  gpujit_region_report_free(r);
  gpujit_free(res);
  if (cupti)
    gpujit_timing_set_source(dev, GPUJIT_TIMER_EVENTS);
}

/* One launch of a phases kernel, the benchmark's sample. */
typedef struct bench_launch {
  gpujit_kernel *k;
  unsigned grid[3], block[3];
  void **args;
} bench_launch;

static int bench_fn(void *payload)
{
  bench_launch *b = payload;
  return gpujit_launch(b->k, b->grid, b->block, 0, b->args);
}

static double median_ms(gpujit_loaded *l, const char *kernel, int iters, long long amount)
{
  void *args[] = {&iters, &amount, &out};
  bench_launch one = {kernel_of(l, kernel), {(unsigned)sms * 4, 1, 1}, {256, 1, 1}, args};
  gpujit_bench_options bo = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit_bench_result br;
  /* a fixed 30: the benchmark reads the samples' regions when it ends (bench/bench_regions.c
   * measures the cost in alternated rounds with its spread) */
  bo.min_samples = 30, bo.max_samples = 30, bo.min_time_s = 0, bo.timeout_s = 5;
  assert_int_equal(gpujit_benchmark(&br, NULL, dev, bench_fn, &one, &bo), 0);
  return br.gpu.median;
}

/* The best of three rounds, with and without regions alternating; the median region's ns. */
static double side_by_side(gpujit_loaded *off, const char *kernel, long long amount, double *region_ns,
                           double *on_out, double *off_out)
{
  double best = 1e9;
  unsigned grid[3] = {(unsigned)sms * 4, 1, 1}, block[3] = {256, 1, 1};
  int iters = 20;
  void *args[] = {&iters, &amount, &out};
  gpujit_region_report *r;
  for (int round = 0; round < 3; round++) {
    const gpujit_region_report *samples;
    double on_ms, off_ms;
    assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
    on_ms = median_ms(loaded, kernel, iters, amount);
    samples = gpujit_timing_regions(dev, loaded); /* the benchmark read its samples' events */
    assert_non_null(samples);
    if (samples->dropped) /* a dropped event skips its stores: it would read cheaper */
      fail_msg("%llu events dropped while timing %s", (unsigned long long)samples->dropped, kernel);
    off_ms = median_ms(off, kernel, iters, amount);
    if (on_ms / off_ms < best)
      best = on_ms / off_ms, *on_out = on_ms, *off_out = off_ms;
  }
  assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
  assert_int_equal(gpujit_launch(kernel_of(loaded, kernel), grid, block, 0, args), 0);
  r = read_regions(loaded, *on_out, 1);
  *region_ns = row(r, "phase")->ns_median;
  printf("RESULT regions_%s_min_call_cycles %llu\n", kernel, (unsigned long long)r->min_call_cycles);
  gpujit_region_report_free(r);
  return best;
}

/* Regions of >= 2 us each cost at most 3 %: the same kernels built with and without regions,
 * benchmarked side by side. `phases` does a fixed amount of FMA work per region with 32 warps per
 * SM (the recording's latency is hidden by the other warps: what a real kernel sees); the check is
 * on it. `spin_phases` waits a fixed number of cycles per region, so every cycle of an event's
 * latency (its atomicAdd's round trip) lengthens the kernel: the worst case, reported. */
static void test_regions__cost(void **state)
{
  gpujit_loaded *off = NULL;
  double ratio, spin_ratio, ns, spin_ns, on_ms = 0, off_ms = 0, son = 0, soff = 0;
  (void)state;
  assert_int_equal(gpujit_module_load(&off, dev, mod_off), 0);
  assert_int_equal(gpujit_loaded_regions(off), 0);
  /* room for every sample's events (a dropped event skips its stores: it would read cheaper) */
  /* and the tails of the chunks the warp slots hold (64 events each, 64 slots a SM, SM ids may skip) */
  assert_int_equal(gpujit_loaded_regions_capacity(loaded, (uint64_t)sms * 4 * 8 * 40 * 30 + (uint64_t)sms * 2 * 64 * 64),
                   0);
  ratio = side_by_side(off, "phases", 1024, &ns, &on_ms, &off_ms);
  spin_ratio = side_by_side(off, "spin_phases", 6000, &spin_ns, &son, &soff);
  printf("RESULT regions_cost_on_ms %.6f\nRESULT regions_cost_off_ms %.6f\nRESULT regions_cost_ratio %.4f\n", on_ms,
         off_ms, ratio);
  printf("RESULT regions_phase_ns_median %.0f\n", ns);
  /* every warp is resident at once and runs its 40 events in sequence: the time each adds */
  printf("RESULT regions_event_cost_ns %.1f\n", (on_ms - off_ms) * 1e6 / 40.0);
  printf("RESULT regions_spin_cost_ratio %.4f\nRESULT regions_spin_phase_ns_median %.0f\n", spin_ratio, spin_ns);
  printf("RESULT regions_spin_event_latency_ns %.1f\n", (son - soff) * 1e6 / 40.0);
  gpujit_loaded_free(off);
  assert_int_equal(gpujit_loaded_regions_capacity(loaded, GPUJIT_REGIONS_DEFAULT_EVENTS), 0);
  check("cost_regions_2us", ns >= 2000, "median region %.0f ns", ns);
  check("cost_at_most_1.03x", ratio <= 1.03, "with regions %.4fx the time without (best of 3 rounds); latency-bound "
                                              "spin: %.4fx", ratio, spin_ratio);
}

/* The timers and the benchmark read the regions of the launches they timed by themselves: the
 * outer timed region's three launches, the nested region's one, the benchmark's samples without
 * its warm-up; a module without regions gets no table. */
static void test_regions__timers_read_their_launches(void **state)
{
  gpujit_loaded *off = NULL, *l = (gpujit_loaded *)1;
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  const gpujit_region_report *r;
  long long cycles = 100000;
  void *args[] = {&cycles, &out};
  bench_launch one = {NULL, {(unsigned)sms, 1, 1}, {128, 1, 1}, args};
  gpujit_bench_options bo = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit_bench_result br;
  double kernel_ms = 0;
  uint64_t per_launch = (uint64_t)sms * 4;
  (void)state;
  assert_int_equal(gpujit_module_load(&off, dev, mod_off), 0);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_KERNEL), 0);
  launch_spin(loaded, (unsigned)sms, 128, cycles);
  launch_spin(off, (unsigned)sms, 128, cycles);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_KERNEL), 0);
  launch_spin(loaded, (unsigned)sms, 128, cycles);
  assert_int_equal(gpujit_timing_end(&res, &n, dev), 0);
  gpujit_free(res);
  r = gpujit_timing_regions(dev, loaded); /* the inner region's own launch */
  check("timer_inner_reads_its_own", r && r->launches == 1 && row(r, "spin")->calls == per_launch,
        "launches %u (want 1)", r ? r->launches : 0);
  launch_spin(loaded, (unsigned)sms, 128, cycles);
  assert_int_equal(gpujit_timing_end(&res, &n, dev), 0);
  for (size_t i = 0; i < n; i++)
    kernel_ms += i == 1 ? 0 : res[i].elapsed_ms; /* the second launch is the module without regions */
  gpujit_free(res);
  r = gpujit_timing_regions(dev, loaded);
  check("timer_reads_regions", r && r->launches == 3 && row(r, "spin")->calls == 3 * per_launch &&
                                   fabs(r->kernel_ns - kernel_ms * 1e6) < 1e-3 * kernel_ms * 1e6 && row(r, "spin")->share > 0.5,
        "launches %u calls %llu (want 3, %llu) kernel %.0f ns (timer %.0f) share %.3f", r ? r->launches : 0,
        r ? (unsigned long long)row(r, "spin")->calls : 0ULL, (unsigned long long)(3 * per_launch),
        r ? r->kernel_ns : 0, kernel_ms * 1e6, r ? row(r, "spin")->share : 0);
  check("timer_module_without_regions", gpujit_timing_regions(dev, off) == NULL &&
                                            gpujit_timing_regions_at(dev, 0, &l) == r && l == loaded &&
                                            gpujit_timing_regions_at(dev, 1, &l) == NULL && l == NULL,
        "a table for the module without regions, or a second module listed");
  one.k = kernel_of(loaded, "spin");
  bo.warmup = 3, bo.min_samples = 10, bo.max_samples = 10, bo.min_time_s = 0;
  assert_int_equal(gpujit_benchmark(&br, NULL, dev, bench_fn, &one, &bo), 0);
  r = gpujit_timing_regions(dev, loaded);
  check("benchmark_reads_regions", r && r->launches == 10 && row(r, "spin")->calls == 10 * per_launch &&
                                       fabs(r->kernel_ns - br.gpu.mean * 10 * 1e6) < 1e-3 * r->kernel_ns,
        "launches %u calls %llu (want 10 samples, not the warm-up) kernel %.0f ns (samples %.0f)", r ? r->launches : 0,
        r ? (unsigned long long)row(r, "spin")->calls : 0ULL, r ? r->kernel_ns : 0, br.gpu.mean * 10 * 1e6);
  one.k = kernel_of(off, "spin");
  assert_int_equal(gpujit_benchmark(&br, NULL, dev, bench_fn, &one, &bo), 0);
  check("benchmark_without_regions", gpujit_timing_regions(dev, loaded) == NULL &&
                                         gpujit_timing_regions_at(dev, 0, &l) == NULL && l == NULL,
        "a table after benchmarking the module without regions");
  gpujit_loaded_free(off);
}

/* Every timer kind reads its launches' regions: a host timer (no kernel time: share unknown), a
 * process-wide CUPTI capture (its kernel records give the share) with a timed region inside it
 * (its own launch: read from the mark its window took), a timed region with the CUPTI source. */
static void test_regions__every_timer_kind(void **state)
{
  uint64_t per = (uint64_t)sms * 4, lost = 0;
  gpujit_timer *tm = NULL;
  gpujit_capture *cap = NULL;
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  const gpujit_region_report *r;
  (void)state;
  assert_int_equal(gpujit_timer_start(&tm, dev, "host", 0, 0), 0);
  launch_spin(loaded, (unsigned)sms, 128, 100000);
  launch_spin(loaded, (unsigned)sms, 128, 100000);
  launch_spin(loaded, (unsigned)sms, 128, 100000);
  assert_int_equal(gpujit_timer_stop(tm, NULL), 0);
  r = gpujit_timing_regions(dev, loaded);
  check("host_timer", r && r->launches == 3 && row(r, "spin")->calls == 3 * per && row(r, "spin")->share < 0,
        "launches %u (want 3) share %.3f (want unknown)", r ? r->launches : 0, r ? row(r, "spin")->share : 0);
  if (gpujit_capture_begin(&cap, GPUJIT_TIMING_KERNEL) < 0) {
    printf("CHECK regions_capture SKIPPED %s\n", gpujit_error_last());
  } else {
    assert_int_equal(gpujit_capture_regions(cap, dev), 0);
    launch_spin(loaded, (unsigned)sms, 128, 100000);
    gpujit_timing_begin(dev, GPUJIT_TIMING_KERNEL); /* inside the capture: its own launch */
    launch_spin(loaded, (unsigned)sms, 128, 100000);
    assert_int_equal(gpujit_timing_end(&res, &n, dev), 0);
    gpujit_free(res);
    r = gpujit_timing_regions(dev, loaded);
    check("capture_inner_region", r && r->launches == 1 && row(r, "spin")->calls == per && r->unmatched == 0 &&
                                      row(r, "spin")->share > 0.5,
          "launches %u calls %llu (want 1, %llu) unmatched %llu", r ? r->launches : 0,
          r ? (unsigned long long)row(r, "spin")->calls : 0ULL, (unsigned long long)per,
          r ? (unsigned long long)r->unmatched : 0ULL);
    assert_int_equal(gpujit_capture_end(cap, &res, &n, &lost), 0);
    gpujit_free(res);
    r = gpujit_timing_regions(dev, loaded);
    check("capture", r && r->launches == 2 && row(r, "spin")->calls == 2 * per && row(r, "spin")->share > 0.5,
          "launches %u calls %llu (want 2, %llu) share %.3f (the capture's kernel time)", r ? r->launches : 0,
          r ? (unsigned long long)row(r, "spin")->calls : 0ULL, (unsigned long long)(2 * per),
          r ? row(r, "spin")->share : 0);
  }
  if (gpujit_timing_set_source(dev, GPUJIT_TIMER_CUPTI) < 0) {
    printf("CHECK regions_cupti_timer SKIPPED %s\n", gpujit_error_last());
    return;
  }
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_KERNEL), 0);
  launch_spin(loaded, (unsigned)sms, 128, 100000);
  launch_spin(loaded, (unsigned)sms, 128, 100000);
  assert_int_equal(gpujit_timing_end(&res, &n, dev), 0);
  gpujit_free(res);
  gpujit_timing_set_source(dev, GPUJIT_TIMER_EVENTS);
  r = gpujit_timing_regions(dev, loaded);
  check("cupti_timer", r && r->launches == 2 && row(r, "spin")->calls == 2 * per && row(r, "spin")->share > 0.5,
        "launches %u share %.3f", r ? r->launches : 0, r ? row(r, "spin")->share : 0);
}

/* A buffer of one chunk (64 events) and 4 x SMs x 8 warps writing two each: the warp slot that
 * claimed the chunk keeps its warps' events (whole begin/end pairs), every other slot finds no
 * chunk left and counts its events as dropped: kept + dropped = made, nothing written past the end
 * (compute-sanitizer memcheck runs this one: TEST_FILTER=*overflow*). */
static void test_regions__overflow_drops(void **state)
{
  gpujit_region_report *r;
  uint64_t want = (uint64_t)sms * 4 * 8 * 2;
  (void)state;
  assert_int_equal(gpujit_loaded_regions_capacity(loaded, 64), 0);
  launch_spin(loaded, (unsigned)sms * 4, 256, 1000);
  r = read_regions(loaded, 0, 1);
  /* back to the default before checking: a failed check must not leave the next tests 64 events */
  assert_int_equal(gpujit_loaded_regions_capacity(loaded, GPUJIT_REGIONS_DEFAULT_EVENTS), 0);
  check("overflow_drops", r->events >= 2 && r->events <= 64 && r->events + r->dropped == want && r->unmatched == 0,
        "kept %llu, dropped %llu of %llu made, unmatched %llu", (unsigned long long)r->events,
        (unsigned long long)r->dropped, (unsigned long long)want, (unsigned long long)r->unmatched);
  gpujit_region_report_free(r);
  /* the next reset empties the slots: a launch records again */
  assert_int_equal(gpujit_loaded_regions_reset(loaded), 0);
  launch_spin(loaded, 2, 64, 1000);
  r = read_regions(loaded, 0, 1);
  check("overflow_then_reset", r->events == 8 && r->dropped == 0, "kept %llu, dropped %llu after a reset (want 8, 0)",
        (unsigned long long)r->events, (unsigned long long)r->dropped);
  gpujit_region_report_free(r);
}

static int build(gpujit_module **m, int regions)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *defs[] = {"GPUJIT_REGIONS"};
  gpujit_source s = {"regions_test.cu", SRC, sizeof(SRC) - 1};
  o.defines = defs, o.defines_count = regions ? 1 : 0;
  return gpujit_module_build_sources(m, &s, 1, &o);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_regions__spin_reads_n_cycles), cmocka_unit_test(test_regions__nested_and_looped),
      cmocka_unit_test(test_regions__globaltimer_advances), cmocka_unit_test(test_regions__diverged_lanes),        cmocka_unit_test(test_regions__two_streams_at_once), cmocka_unit_test(test_regions__cub_block_reduce),
      cmocka_unit_test(test_regions__graph_launch),        cmocka_unit_test(test_regions__agrees_with_cupti),
      cmocka_unit_test(test_regions__cost),                cmocka_unit_test(test_regions__overflow_drops),
      cmocka_unit_test(test_regions__timers_read_their_launches), cmocka_unit_test(test_regions__every_timer_kind),
  };
  gpujit_device_info info;
  int rc;
  if (gpujit_device_open(&dev, -1) < 0) {
    printf("SKIPPED: no GPU: %s\n", gpujit_error_last());
    return 77;
  }
  gpujit_device_info_get(dev, &info);
  sms = info.multiprocessors;
  if (build(&mod, 1) < 0 || build(&mod_off, 0) < 0 || gpujit_module_load(&loaded, dev, mod) < 0 ||
      gpujit_mem_alloc(&out, dev, (size_t)sms * 4 * 256 * sizeof(float)) < 0) {
    printf("setup failed: %s\n%s\n", gpujit_error_last(), gpujit_error_log() ? gpujit_error_log() : "");
    return 1;
  }
  if (!gpujit_loaded_regions(loaded)) {
    printf("CHECK regions_bound FAIL the module was loaded without its regions buffer\n");
    return 1;
  }
  printf("CHECK regions_bound ok\n");
  if (getenv("TEST_FILTER"))
    cmocka_set_test_filter(getenv("TEST_FILTER"));
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  gpujit_mem_free(dev, out);
  gpujit_loaded_free(loaded);
  gpujit_module_free(mod);
  gpujit_module_free(mod_off);
  gpujit_device_free(dev);
  return rc;
}
