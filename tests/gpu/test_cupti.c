/* CUPTI timing on the GPU machine: serialised kernel records for every launch, the concurrent
 * kind's known under-read of short kernels back to back, agreement with events on long kernels,
 * graph kernels by node. Without a driver, a device or CUPTI: exit 77 (skipped) with the reason. */
#include <math.h>

#include "helpers.h"

#include "gpujit.h"
#include "run/device.h"
#include "timing/cupti.h"

#define SRC                                                                                          \
  "extern \"C\" __global__ void spin(long long cycles, int *out)\n"                                  \
  "{ long long t0 = clock64(); while (clock64() - t0 < cycles) {} if (threadIdx.x == 0) out[blockIdx.x] = 1; }\n"

/* about 3 µs and 200 µs at the H100's ~2 GHz */
#define SHORT_CYCLES 6000LL
#define LONG_CYCLES 400000LL
#define LAUNCHES 200

static gpujit_device *dev;
static gpujit_module *mod;
static gpujit_loaded *loaded;
static gpujit_kernel *spin;
static gpujit_devptr out;

static void launch_spin(long long cycles)
{
  unsigned grid[3] = {132, 1, 1}, block[3] = {128, 1, 1};
  void *args[] = {&cycles, &out};
  assert_int_equal(gpujit_launch(spin, grid, block, 0, args), 0);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Time `count` spins in one region with `source`; the kernels' median (ms). */
static double median_spins(gpujit_timer_source source, long long cycles, int count)
{
  gpujit_timing_result *r = NULL;
  size_t nr = 0, k = 0;
  double *ms = calloc((size_t)count, sizeof(double)), med;
  assert_int_equal(gpujit_timing_set_source(dev, source), 0);
  for (int i = 0; i < 5; i++)
    launch_spin(cycles); /* warm */
  assert_int_equal(gpujit_synchronize(dev), 0);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_KERNEL), 0);
  for (int i = 0; i < count; i++)
    launch_spin(cycles);
  assert_int_equal(gpujit_timing_end(&r, &nr, dev), 0);
  assert_int_equal(nr, (size_t)count);
  for (size_t i = 0; i < nr; i++) {
    assert_false(r[i].missing);
    assert_true(r[i].elapsed_ms > 0);
    assert_string_equal(r[i].name, "spin");
    if (i)
      assert_true(r[i].order > r[i - 1].order); /* issue order */
    ms[k++] = r[i].elapsed_ms;
  }
  qsort(ms, k, sizeof(*ms), cmp_double);
  med = ms[k / 2];
  free(ms);
  gpujit_free(r);
  return med;
}

static void test_cupti__every_launch_and_copy(void **state)
{
  gpujit_timing_result *r = NULL;
  size_t nr = 0;
  int host[132];
  (void)state;
  assert_int_equal(gpujit_timing_set_source(dev, GPUJIT_TIMER_CUPTI), 0);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_ALL), 0);
  assert_int_equal(gpujit_memset_d32(dev, out, 0, 132), 0);
  for (int i = 0; i < LAUNCHES; i++)
    launch_spin(SHORT_CYCLES);
  assert_int_equal(gpujit_memcpy_dtoh(dev, host, out, sizeof(host)), 0);
  assert_int_equal(gpujit_timing_end(&r, &nr, dev), 0);
  assert_int_equal(nr, LAUNCHES + 2);
  assert_int_equal(r[0].kind, GPUJIT_ACTIVITY_MEMSET);
  assert_int_equal(r[0].bytes, sizeof(host));
  assert_int_equal(r[nr - 1].kind, GPUJIT_ACTIVITY_MEMCPY_DTOH);
  assert_int_equal(r[nr - 1].bytes, sizeof(host));
  for (size_t i = 0; i < nr; i++) {
    assert_false(r[i].missing);
    assert_true(r[i].elapsed_ms > 0);
    if (i)
      assert_true(r[i].start_us >= r[i - 1].start_us); /* serialised: one after another */
  }
  assert_int_equal(host[0], 1);
  assert_int_equal(gpujit_timing_dropped(dev), 0);
  gpujit_free(r);
}

/* The CUPTI timer's launches skip cuCtxSetCurrent while CUPTI reports no change of the thread's
 * context: the program leaving none current (cuCtxSetCurrent(NULL), cuCtxPopCurrent) between
 * launches must reach gpujit through CUPTI's callbacks, or the launch after fails (no context). */
static void test_cupti__launches_after_the_program_changes_context(void **state)
{
  const gpujit__driver *d = dev->d;
  gpujit_timing_result *r = NULL;
  size_t nr = 0;
  CUcontext popped = NULL;
  bool watched;
  (void)state;
  assert_int_equal(gpujit_timing_set_source(dev, GPUJIT_TIMER_CUPTI), 0);
  watched = gpujit__cupti_by_callback(); /* gpujit holds the subscriber: the watch is on */
  if (watched)
    assert_int_not_equal(__atomic_load_n(&gpujit__ctx_watching, __ATOMIC_ACQUIRE), 0);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_KERNEL), 0);
  for (int i = 0; i < 24; i++) {
    if (watched && i % 2 == 0) /* the last launch noted the device's context under the watch */
      assert_true(gpujit__ctx_noted.watch != 0 && gpujit__ctx_noted.ctx == dev->ctx);
    if (i % 4 == 1)
      assert_int_equal(d->cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    if (i % 4 == 3)
      assert_int_equal(d->cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    if (i % 2 == 1) /* CUPTI's callback of the program's call forgot the note */
      assert_int_equal(gpujit__ctx_noted.watch, 0);
    launch_spin(SHORT_CYCLES);
  }
  assert_int_equal(gpujit_timing_end(&r, &nr, dev), 0);
  assert_int_equal(nr, 24);
  for (size_t i = 0; i < nr; i++) {
    assert_false(r[i].missing);
    assert_true(r[i].elapsed_ms > 0);
  }
  gpujit_free(r);
}

/* The measured reason for the design: the concurrent kind reads short kernels back to back short. */
static void test_cupti__concurrent_reads_short_kernels_short(void **state)
{
  double serial, concurrent, events;
  (void)state;
  serial = median_spins(GPUJIT_TIMER_CUPTI, SHORT_CYCLES, LAUNCHES);
  concurrent = median_spins(GPUJIT_TIMER_CUPTI_CONCURRENT, SHORT_CYCLES, LAUNCHES);
  events = median_spins(GPUJIT_TIMER_EVENTS, SHORT_CYCLES, LAUNCHES);
  printf("short spin: cupti %.4f ms, cupti-concurrent %.4f ms, events %.4f ms\n", serial, concurrent, events);
  assert_true(concurrent < serial);
  assert_true(events > serial); /* events add their own overhead to a 3 µs kernel */
}

static void test_cupti__long_kernels_agree_with_events(void **state)
{
  double cupti, events;
  (void)state;
  cupti = median_spins(GPUJIT_TIMER_CUPTI, LONG_CYCLES, 20);
  events = median_spins(GPUJIT_TIMER_EVENTS, LONG_CYCLES, 20);
  printf("long spin: cupti %.4f ms, events %.4f ms (%+.2f %%)\n", cupti, events, 100 * (cupti - events) / events);
  assert_true(fabs(cupti - events) / events < 0.02);
}

/* Graph kernels by node: the concurrent kind times every node. */
static void test_cupti__graph_kernels_by_node(void **state)
{
  gpujit_graph *g = NULL;
  gpujit_timing_result *r = NULL;
  size_t nr = 0, nodes = 0;
  (void)state;
  assert_int_equal(gpujit_timing_set_source(dev, GPUJIT_TIMER_CUPTI_CONCURRENT), 0);
  assert_int_equal(gpujit_graph_begin(dev), 0);
  launch_spin(SHORT_CYCLES);
  launch_spin(4 * SHORT_CYCLES);
  launch_spin(16 * SHORT_CYCLES);
  assert_int_equal(gpujit_graph_end(&g, dev, "three spins"), 0);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_ALL), 0);
  assert_int_equal(gpujit_graph_launch(g), 0);
  assert_int_equal(gpujit_timing_end(&r, &nr, dev), 0);
  assert_int_equal(nr, 4); /* three nodes, then the graph */
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(r[i].kind, GPUJIT_ACTIVITY_KERNEL);
    assert_string_equal(r[i].name, "three spins: spin");
    assert_true(r[i].graph_node != 0);
    assert_false(r[i].missing);
    assert_true(r[i].elapsed_ms > 0);
    for (size_t k = 0; k < i; k++)
      assert_true(r[i].graph_node != r[k].graph_node);
    nodes++;
  }
  assert_int_equal(nodes, 3);
  assert_int_equal(r[3].kind, GPUJIT_ACTIVITY_GRAPH);
  assert_string_equal(r[3].name, "three spins");
  /* the nodes run in order, each longer than the last, and the graph spans them all */
  assert_false(r[3].missing);
  assert_true(r[1].elapsed_ms > 2 * r[0].elapsed_ms && r[2].elapsed_ms > 2 * r[1].elapsed_ms);
  assert_true(r[3].elapsed_ms >= r[0].elapsed_ms + r[1].elapsed_ms + r[2].elapsed_ms);
  assert_true(r[3].elapsed_ms < 10 * (r[0].elapsed_ms + r[1].elapsed_ms + r[2].elapsed_ms));
  printf("graph nodes: %.4f %.4f %.4f ms, graph %.4f ms\n", r[0].elapsed_ms, r[1].elapsed_ms, r[2].elapsed_ms,
         r[3].elapsed_ms);
  gpujit_free(r);
  gpujit_graph_free(g);
}

static int bench_long(void *payload)
{
  (void)payload;
  launch_spin(LONG_CYCLES);
  return 0;
}

/* The benchmark feeds from CUPTI too: a long kernel reads as with events. */
static void test_cupti__benchmark(void **state)
{
  gpujit_bench_options o = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit_bench_result cupti, events;
  (void)state;
  o.min_samples = 30;
  o.max_samples = 60;
  o.min_time_s = 0;
  assert_int_equal(gpujit_timing_set_source(dev, GPUJIT_TIMER_CUPTI), 0);
  assert_int_equal(gpujit_benchmark(&cupti, NULL, dev, bench_long, NULL, &o), 0);
  assert_int_equal(gpujit_timing_set_source(dev, GPUJIT_TIMER_EVENTS), 0);
  assert_int_equal(gpujit_benchmark(&events, NULL, dev, bench_long, NULL, &o), 0);
  printf("benchmark long spin: cupti %.4f ms (%zu samples), events %.4f ms\n", cupti.gpu.median, cupti.gpu.n,
         events.gpu.median);
  assert_true(cupti.gpu.n >= 30);
  assert_true(fabs(cupti.gpu.median - events.gpu.median) / events.gpu.median < 0.02);
}

/* The serialised kind, measured: a graph's first node is timed, the others come without times and
 * are reported missing (never as zero-length kernels), and so is the graph's own time. */
static void test_cupti__serial_graph_nodes_are_missing_not_zero(void **state)
{
  gpujit_graph *g = NULL;
  gpujit_timing_result *r = NULL;
  size_t nr = 0;
  (void)state;
  assert_int_equal(gpujit_timing_set_source(dev, GPUJIT_TIMER_CUPTI), 0);
  assert_int_equal(gpujit_graph_begin(dev), 0);
  launch_spin(SHORT_CYCLES);
  launch_spin(SHORT_CYCLES);
  assert_int_equal(gpujit_graph_end(&g, dev, "two spins"), 0);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_ALL), 0);
  assert_int_equal(gpujit_graph_launch(g), 0);
  assert_int_equal(gpujit_timing_end(&r, &nr, dev), 0);
  assert_int_equal(nr, 3);
  for (size_t i = 0; i < nr; i++)
    assert_true(r[i].missing ? r[i].elapsed_ms == 0 : r[i].elapsed_ms > 0);
  assert_true(r[0].graph_node < r[1].graph_node); /* nodes in their order */
  assert_true(!r[0].missing || !r[1].missing);    /* CUPTI timed one of them */
  assert_int_equal(r[2].missing, r[0].missing || r[1].missing);
  gpujit_free(r);
  gpujit_graph_free(g);
}

/* A process-wide capture sees work gpujit's timing hooks never announce: launches, a memset and a
 * copy on CUDA's legacy default stream (where CuPy and PyTorch issue theirs), in start order. */
static void test_cupti__capture_sees_every_stream(void **state)
{
  gpujit_capture *cap = NULL;
  gpujit_timing_result *r = NULL;
  size_t nr = 0, spins = 0;
  uint64_t lost = 99;
  int host[132], cur = -2, owner = -2;
  (void)state;
  assert_int_equal(gpujit_timing_set_source(dev, GPUJIT_TIMER_EVENTS), 0);
  assert_int_equal(gpujit_device_current(&cur), 0);
  assert_int_equal(cur, 0 + (int)strtol(getenv("GPUJIT_DEVICE") ? getenv("GPUJIT_DEVICE") : "0", NULL, 10));
  assert_int_equal(gpujit_pointer_device(&owner, out), 0);
  assert_int_equal(owner, cur);
  assert_int_equal(gpujit_pointer_device(&owner, (gpujit_devptr)(uintptr_t)host), 0);
  assert_int_equal(owner, -1);
  assert_int_equal(gpujit_capture_begin(&cap, 0), GPUJIT_EINVAL);
  assert_int_equal(gpujit_capture_begin(&cap, GPUJIT_TIMING_ALL), 0);
  assert_int_equal(gpujit_device_set_stream(dev, GPUJIT_STREAM_LEGACY), 0);
  assert_ptr_equal(gpujit_device_stream(dev), GPUJIT_STREAM_LEGACY);
  assert_int_equal(gpujit_memset_d32(dev, out, 0, 132), 0);
  for (int i = 0; i < 25; i++)
    launch_spin(SHORT_CYCLES);
  assert_int_equal(gpujit_memcpy_dtoh(dev, host, out, sizeof(host)), 0);
  assert_int_equal(gpujit_device_set_stream(dev, NULL), 0);
  assert_int_equal(gpujit_capture_end(cap, &r, &nr, &lost), 0);
  assert_int_equal(lost, 0);
  assert_int_equal(nr, 27);
  assert_int_equal(r[0].kind, GPUJIT_ACTIVITY_MEMSET);
  assert_int_equal(r[0].bytes, 132 * 4);
  assert_int_equal(r[26].kind, GPUJIT_ACTIVITY_MEMCPY_DTOH);
  for (size_t i = 0; i < nr; i++) {
    assert_int_equal(r[i].device, cur);
    assert_true(r[i].elapsed_ms > 0);
    if (i)
      assert_true(r[i].start_us >= r[i - 1].start_us);
    spins += r[i].kind == GPUJIT_ACTIVITY_KERNEL && !strcmp(r[i].name, "spin");
  }
  assert_int_equal(spins, 25);
  for (int i = 0; i < 132; i++)
    assert_int_equal(host[i], 1);
  gpujit_free(r);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cupti__every_launch_and_copy),
      cmocka_unit_test(test_cupti__launches_after_the_program_changes_context),
      cmocka_unit_test(test_cupti__concurrent_reads_short_kernels_short),
      cmocka_unit_test(test_cupti__long_kernels_agree_with_events),
      cmocka_unit_test(test_cupti__graph_kernels_by_node),
      cmocka_unit_test(test_cupti__serial_graph_nodes_are_missing_not_zero),
      cmocka_unit_test(test_cupti__benchmark),
      cmocka_unit_test(test_cupti__capture_sees_every_stream),
  };
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_source s = {"cupti_test.cu", SRC, sizeof(SRC) - 1};
  int rc;
  if (gpujit_device_open(&dev, -1) < 0) {
    printf("SKIPPED: no GPU: %s\n", gpujit_error_last());
    return 77;
  }
  if (gpujit_timing_set_source(dev, GPUJIT_TIMER_CUPTI) < 0) {
    printf("SKIPPED: %s\n", gpujit_error_last());
    gpujit_device_free(dev);
    return 77;
  }
  if (gpujit_module_build_sources(&mod, &s, 1, &o) < 0 || gpujit_module_load(&loaded, dev, mod) < 0 ||
      gpujit_kernel_get(&spin, loaded, "spin") < 0 || gpujit_mem_alloc(&out, dev, 132 * sizeof(int)) < 0) {
    printf("setup failed: %s\n%s\n", gpujit_error_last(), gpujit_error_log());
    return 1;
  }
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  gpujit_timing_set_source(dev, GPUJIT_TIMER_EVENTS);
  gpujit_mem_free(dev, out);
  gpujit_loaded_free(loaded);
  gpujit_module_free(mod);
  gpujit_device_free(dev);
  return rc;
}
