/* Kernel-region windows on the CPU: a stand-in driver whose device memory is host memory and
 * whose launches write region events as gpujit/regions.cuh does (a chunk per warp slot), so
 * every timer kind's window — host timers, timed regions, benchmarks, captures' kernel times,
 * nesting and the marks it reads from — runs here, and the tables are checked call by call. */
#include "helpers.h"

#include "gpujit.h"
#include "run/device.h"
#include "timing/regions.h"

#define W GPUJIT_REGIONS_EVENT_WORDS
#define CHUNK 64u
#define CAPACITY (CHUNK * 16u)
#define SMS 2u
#define NSLOTS (2u * SMS * 64u)
#define WARPS 3u /* warps a launch records: each one call of "phase" */
#define PHASE_CYCLES 1000u
#define PHASE_NS 500u

/* abi, scope (u32); events, capacity, counters, slots, reserved (u64); nslots, chunk (u32) */
static uint64_t state[7];
static uint64_t events[CAPACITY * W];
static uint64_t slots[NSLOTS + 2]; /* the slots, then the counters: claimed, lost (layout 3) */
static const char phase_name[] = "phase";
static unsigned launches_made;
static double clock_ms; /* the stand-in GPU's clock: each launch takes 2 ms */

typedef struct fake_event {
  double ms;
} fake_event;

static CUresult ok_ctx(CUcontext c) { (void)c; return CUDA_SUCCESS; }
static CUresult ok_sync(CUstream s) { (void)s; return CUDA_SUCCESS; }
static CUresult ok_event_sync(CUevent e) { (void)e; return CUDA_SUCCESS; }

static CUresult memset32(CUdeviceptr p, unsigned v, size_t n, CUstream s)
{
  uint32_t *w = (uint32_t *)(uintptr_t)p;
  (void)s;
  for (size_t i = 0; i < n; i++)
    w[i] = v;
  return CUDA_SUCCESS;
}

static CUresult dtoh(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
  (void)s;
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return CUDA_SUCCESS;
}

static CUresult no_range(void *data, CUpointer_attribute a, CUdeviceptr p)
{
  (void)data, (void)a, (void)p;
  return CUDA_ERROR_INVALID_VALUE; /* names are read byte by byte */
}

static CUresult event_create(CUevent *e, unsigned flags)
{
  (void)flags;
  *e = (CUevent)calloc(1, sizeof(fake_event));
  return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult event_destroy(CUevent e)
{
  free(e);
  return CUDA_SUCCESS;
}

static CUresult event_record(CUevent e, CUstream s)
{
  (void)s;
  ((fake_event *)(void *)e)->ms = clock_ms;
  return CUDA_SUCCESS;
}

static CUresult event_elapsed(float *ms, CUevent a, CUevent b)
{
  *ms = (float)(((fake_event *)(void *)b)->ms - ((fake_event *)(void *)a)->ms);
  return CUDA_SUCCESS;
}

/* One event of warp slot `slot`, as the header writes it: a new chunk when the slot's is full. */
static void record(unsigned slot, uint64_t clk, uint64_t ns, unsigned unit, int end)
{
  uint32_t pos = (uint32_t)slots[slot];
  uint64_t *e;
  if (pos % CHUNK == 0)
    pos = (uint32_t)(slots[NSLOTS]++ * CHUNK);
  e = &events[(size_t)pos * W];
  e[0] = (uint64_t)(uintptr_t)phase_name, e[1] = clk, e[2] = ns;
  e[3] = (uint64_t)unit | (uint64_t)(slot / 64) << 32 | (uint64_t)(launches_made & 0x7fff) << 48 |
         (uint64_t)(end != 0) << 63;
  slots[slot] = (slots[slot] & ~(uint64_t)0xffffffffu) | (pos + 1);
}

/* A launch: each of WARPS warps (one per slot) calls "phase" once. */
static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, CUstream s, void **params, void **extra)
{
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s, (void)params, (void)extra;
  launches_made++;
  for (unsigned w = 0; w < WARPS; w++) {
    uint64_t t = (uint64_t)(clock_ms * 1e6) + 100 * w;
    record(w * 64 + w % SMS, 10000 + w, t, w, 0);
    record(w * 64 + w % SMS, 10000 + w + PHASE_CYCLES, t + PHASE_NS, w, 1);
  }
  clock_ms += 2.0;
  return CUDA_SUCCESS;
}

static gpujit__driver drv;
static gpujit_device dev;
static struct gpujit_loaded loaded;
static struct gpujit_kernel kern;

static int setup(void **st)
{
  (void)st;
  memset(&drv, 0, sizeof(drv)), memset(&dev, 0, sizeof(dev)), memset(&loaded, 0, sizeof(loaded));
  memset(&kern, 0, sizeof(kern)), memset(state, 0, sizeof(state)), memset(slots, 0, sizeof(slots));
  launches_made = 0, clock_ms = 0;
  drv.cuCtxSetCurrent = ok_ctx, drv.cuStreamSynchronize = ok_sync, drv.cuEventSynchronize = ok_event_sync;
  drv.cuMemsetD32Async = memset32, drv.cuMemcpyDtoHAsync = dtoh, drv.cuPointerGetAttribute = no_range;
  drv.cuEventCreate = event_create, drv.cuEventDestroy = event_destroy, drv.cuEventRecord = event_record;
  drv.cuEventElapsedTime = event_elapsed, drv.cuLaunchKernel = launch;
  dev.d = &drv;
  dev.info.multiprocessors = SMS;
  for (int i = 0; i < 3; i++)
    dev.info.max_block[i] = 1024, dev.info.max_grid[i] = 65535;
  dev.info.max_shared_per_block = dev.info.max_shared_per_block_optin = 49152;
  state[0] = GPUJIT_REGIONS_LAYOUT;
  loaded.dev = &dev;
  loaded.regions_state = (gpujit_devptr)(uintptr_t)state;
  loaded.regions_events = (gpujit_devptr)(uintptr_t)events;
  loaded.regions_slots = (gpujit_devptr)(uintptr_t)slots;
  loaded.regions_capacity = CAPACITY, loaded.regions_chunk = CHUNK, loaded.regions_nslots = NSLOTS;
  loaded.regions_abi = GPUJIT_REGIONS_LAYOUT;
  kern.owner = &loaded;
  kern.name = (char *)"phases";
  kern.attrs.max_threads_per_block = 1024;
  loaded.kernels = &kern, loaded.count = 1;
  return 0;
}

static int teardown(void **st)
{
  (void)st;
  if (dev.hooks && dev.hooks->detach)
    dev.hooks->detach(&dev, dev.hooks_payload);
  return 0;
}

static void run_once(void)
{
  static const unsigned g[3] = {1, 1, 1}, b[3] = {96, 1, 1};
  assert_int_equal(gpujit_launch(&kern, g, b, 0, NULL), 0);
}

static const gpujit_region_stat *phase_of(const gpujit_region_report *r)
{
  assert_non_null(r);
  assert_int_equal(r->count, 1);
  assert_string_equal(r->regions[0].name, "phase");
  return &r->regions[0];
}

/* A host timer given the device reads the regions of its launches (none before it: reset at the
 * window's first launch), with no kernel time: share unknown. */
static void test_kregions_watch__host_timer_reads_its_launches(void **st)
{
  gpujit_timer *timer = NULL;
  const gpujit_region_stat *s;
  const gpujit_region_report *r;
  (void)st;
  run_once(); /* before the window: not in its table */
  assert_int_equal(gpujit_timer_start(&timer, &dev, "step", 0, 0), 0);
  run_once();
  run_once();
  assert_null(gpujit_timing_regions(&dev, &loaded)); /* the window is open */
  assert_int_equal(gpujit_timer_stop(timer, NULL), 0);
  r = gpujit_timing_regions(&dev, &loaded);
  s = phase_of(r);
  assert_int_equal(r->launches, 2);
  assert_int_equal(s->calls, 2 * WARPS);
  assert_int_equal((int)s->cycles_median, PHASE_CYCLES);
  assert_int_equal((int)s->ns_median, PHASE_NS);
  assert_true(s->share < 0);
  assert_int_equal(r->dropped, 0);
}

/* Nested windows each read their own launches: a timed region inside a host timer reads the one
 * launch it covers (its events follow the outer window's in the same chunks: read from the mark),
 * the timer both; each table is the device's last when its window closes. */
static void test_kregions_watch__nested_each_reads_its_own(void **st)
{
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  const gpujit_region_report *r;
  (void)st;
  assert_int_equal(gpujit_timing_regions_begin(&dev), 0);
  run_once();
  assert_int_equal(gpujit_timing_begin(&dev, GPUJIT_TIMING_KERNEL), 0);
  run_once();
  assert_int_equal(gpujit_timing_end(&res, &n, &dev), 0);
  assert_int_equal(n, 1);
  gpujit_free(res);
  r = gpujit_timing_regions(&dev, &loaded);
  assert_int_equal(r->launches, 1);
  assert_int_equal(r->events, 2 * WARPS);
  assert_int_equal(phase_of(r)->calls, WARPS);
  assert_int_equal(r->unmatched, 0);
  assert_true(phase_of(r)->share > 0.00024 && phase_of(r)->share < 0.00026); /* its own events' time */
  assert_int_equal(gpujit_timing_regions_end(&dev), 0);
  r = gpujit_timing_regions(&dev, &loaded);
  assert_int_equal(r->launches, 2);
  assert_int_equal(phase_of(r)->calls, 2 * WARPS);
  assert_true(phase_of(r)->share < 0); /* a host timer times no kernel */
}

/* An inner window opened where the slots' chunks are partly full, its launches running into new
 * chunks: it reads exactly its own calls, the outer one all, nothing unmatched. */
static void test_kregions_watch__mark_across_chunks(void **st)
{
  const gpujit_region_report *r;
  (void)st;
  assert_int_equal(gpujit_timing_regions_begin(&dev), 0);
  for (int i = 0; i < 30; i++) /* 60 events a slot: its first chunk nearly full */
    run_once();
  assert_int_equal(gpujit_timing_regions_begin(&dev), 0);
  for (int i = 0; i < 10; i++) /* 20 more: into a second chunk */
    run_once();
  assert_int_equal(gpujit_timing_regions_end(&dev), 0);
  r = gpujit_timing_regions(&dev, &loaded);
  assert_int_equal(r->launches, 10);
  assert_int_equal(r->events, 10 * 2 * WARPS);
  assert_int_equal(phase_of(r)->calls, 10 * WARPS);
  assert_int_equal(r->unmatched + r->dropped, 0);
  run_once();
  assert_int_equal(gpujit_timing_regions_end(&dev), 0);
  r = gpujit_timing_regions(&dev, &loaded);
  assert_int_equal(r->launches, 41);
  assert_int_equal(phase_of(r)->calls, 41 * WARPS);
  assert_int_equal(r->unmatched + r->dropped, 0);
}

static int bench_fn(void *payload)
{
  (void)payload;
  run_once();
  return 0;
}

/* A benchmark inside a host timer reads its samples (not its warm-up); the timer every launch. */
static void test_kregions_watch__benchmark_inside_timer(void **st)
{
  gpujit_bench_options bo = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit_bench_result br;
  gpujit_timer *timer = NULL;
  const gpujit_region_report *r;
  (void)st;
  bo.warmup = 2, bo.min_samples = 5, bo.max_samples = 5, bo.min_time_s = 0;
  assert_int_equal(gpujit_timer_start(&timer, &dev, "step", 0, 0), 0);
  run_once();
  assert_int_equal(gpujit_benchmark(&br, NULL, &dev, bench_fn, NULL, &bo), 0);
  r = gpujit_timing_regions(&dev, &loaded);
  assert_int_equal(r->launches, 5);
  assert_int_equal(phase_of(r)->calls, 5 * WARPS);
  assert_true(r->kernel_ns > 9.99e6 && r->kernel_ns < 10.01e6); /* the samples' 5 x 2 ms */
  assert_int_equal(gpujit_timer_stop(timer, NULL), 0);
  r = gpujit_timing_regions(&dev, &loaded);
  assert_int_equal(r->launches, 8);
  assert_int_equal(phase_of(r)->calls, 8 * WARPS);
}

/* The outermost timed region's events give the kernel time (share); a window that times nothing
 * inside it reads its one launch without. */
static void test_kregions_watch__timed_region_gives_share(void **st)
{
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  const gpujit_region_report *r;
  gpujit_loaded *l = NULL;
  (void)st;
  assert_int_equal(gpujit_timing_begin(&dev, GPUJIT_TIMING_KERNEL), 0);
  assert_int_equal(gpujit_timing_regions_begin(&dev), 0);
  run_once();
  assert_int_equal(gpujit_timing_regions_end(&dev), 0);
  assert_int_equal(gpujit_timing_regions(&dev, &loaded)->launches, 1);
  run_once();
  assert_int_equal(gpujit_timing_end(&res, &n, &dev), 0);
  assert_int_equal(n, 2);
  assert_true(res[0].elapsed_ms > 1.99 && res[0].elapsed_ms < 2.01);
  gpujit_free(res);
  r = gpujit_timing_regions_at(&dev, 0, &l);
  assert_ptr_equal(l, &loaded);
  assert_int_equal(r->launches, 2);
  assert_true(r->kernel_ns > 3.99e6 && r->kernel_ns < 4.01e6);
  /* a warp's 500 ns in a 2 ms launch */
  assert_true(phase_of(r)->share > 0.00024 && phase_of(r)->share < 0.00026);
  assert_null(gpujit_timing_regions_at(&dev, 1, &l));
  assert_null(l);
}

/* Windows that overlap without nesting each read their own launches; a window in which the module
 * did not run has no table for it. */
static void test_kregions_watch__overlapping_windows(void **st)
{
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  (void)st;
  assert_int_equal(gpujit_timing_regions_begin(&dev), 0);
  assert_int_equal(gpujit_timing_begin(&dev, GPUJIT_TIMING_KERNEL), 0);
  run_once();
  assert_int_equal(gpujit_timing_regions_end(&dev), 0);
  assert_int_equal(gpujit_timing_regions(&dev, &loaded)->launches, 1);
  run_once();
  assert_int_equal(gpujit_timing_end(&res, &n, &dev), 0);
  gpujit_free(res);
  assert_int_equal(gpujit_timing_regions(&dev, &loaded)->launches, 2);
  assert_int_equal(phase_of(gpujit_timing_regions(&dev, &loaded))->calls, 2 * WARPS);
  assert_int_equal(gpujit_timing_regions_begin(&dev), 0);
  assert_int_equal(gpujit_timing_regions_end(&dev), 0);
  assert_null(gpujit_timing_regions(&dev, &loaded)); /* nothing launched in it */
}

/* A capture's kernel records time the window's modules: its kernels by name, on its device. */
static void test_kregions_watch__capture_results_time_modules(void **st)
{
  gpujit__timing *t = NULL;
  gpujit__rwin *w = NULL;
  gpujit_timing_result res[4];
  (void)st;
  memset(res, 0, sizeof(res));
  snprintf(res[0].name, sizeof(res[0].name), "phases"), res[0].elapsed_ms = 1.5;
  snprintf(res[1].name, sizeof(res[1].name), "phases"), res[1].elapsed_ms = 7, res[1].device = 1;
  snprintf(res[2].name, sizeof(res[2].name), "other"), res[2].elapsed_ms = 9;
  snprintf(res[3].name, sizeof(res[3].name), "memcpy HtoD"), res[3].elapsed_ms = 3;
  res[3].kind = GPUJIT_ACTIVITY_MEMCPY_HTOD;
  assert_int_equal(gpujit__timing_of(&dev, &t), 0);
  assert_int_equal(gpujit__rwatch_open(t, &w), 0);
  run_once();
  gpujit__rwatch_time_results(t, w, res, 4);
  assert_int_equal(gpujit__rwatch_close(t, w, 0), 0);
  assert_true(gpujit_timing_regions(&dev, &loaded)->kernel_ns > 1.49e6 &&
              gpujit_timing_regions(&dev, &loaded)->kernel_ns < 1.51e6);
}

static void test_kregions_watch__bad_calls(void **st)
{
  (void)st;
  assert_int_equal(gpujit_timing_regions_begin(NULL), GPUJIT_EINVAL);
  assert_int_equal(gpujit_timing_regions_end(NULL), GPUJIT_EINVAL);
  assert_int_equal(gpujit_timing_regions_end(&dev), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "without gpujit_timing_regions_begin"));
  /* a timed region's window is not a plain join's to leave */
  assert_int_equal(gpujit_timing_begin(&dev, GPUJIT_TIMING_KERNEL), 0);
  assert_int_equal(gpujit_timing_regions_end(&dev), GPUJIT_EINVAL);
  assert_int_equal(gpujit_capture_regions(NULL, &dev), GPUJIT_EINVAL);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_kregions_watch__host_timer_reads_its_launches, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kregions_watch__nested_each_reads_its_own, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kregions_watch__mark_across_chunks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kregions_watch__benchmark_inside_timer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kregions_watch__timed_region_gives_share, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kregions_watch__overlapping_windows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kregions_watch__capture_results_time_modules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kregions_watch__bad_calls, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
