/* GPU tests: run on the GPU machine (scripts/gpu.sh); without a driver or device the whole
 * executable exits 77, which CTest reports as skipped, after printing why. */
#include <cjson/cJSON.h>
#include <math.h>

#include "helpers.h"

#include "gpujit.h"

#define SRC                                                                                   \
  "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y)\n"            \
  "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"   \
  "extern \"C\" __global__ void spin(long long cycles, int *out)\n"                           \
  "{ long long t0 = clock64(); while (clock64() - t0 < cycles) {} if (threadIdx.x == 0) out[blockIdx.x] = 1; }\n" \
  "extern \"C\" __global__ void poke(int *p) { *p = 1; }\n"

static gpujit_device *dev;
static gpujit_module *mod;
static gpujit_loaded *loaded;

static gpujit_kernel *kernel(const char *name)
{
  gpujit_kernel *k = NULL;
  assert_int_equal(gpujit_kernel_get(&k, loaded, name), 0);
  return k;
}

static void launch_saxpy(int n, float a, gpujit_devptr x, gpujit_devptr y)
{
  unsigned grid[3] = {(unsigned)(n + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
  void *args[] = {&n, &a, &x, &y};
  assert_int_equal(gpujit_launch(kernel("saxpy"), grid, block, 0, args), 0);
}

static void test_gpu__saxpy_matches_cpu(void **state)
{
  const int n = 1 << 20;
  float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
  gpujit_devptr dx, dy;
  double num = 0, den = 0;
  (void)state;
  srand(12345u);
  for (int i = 0; i < n; i++) {
    x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    y[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    got[i] = NAN; /* poisoned: every element must be written */
  }
  assert_int_equal(gpujit_mem_alloc(&dx, dev, n * sizeof(float)), 0);
  assert_int_equal(gpujit_mem_alloc(&dy, dev, n * sizeof(float)), 0);
  assert_int_equal(gpujit_memcpy_htod(dev, dx, x, n * sizeof(float)), 0);
  assert_int_equal(gpujit_memcpy_htod(dev, dy, y, n * sizeof(float)), 0);
  launch_saxpy(n, 2.5f, dx, dy);
  assert_int_equal(gpujit_memcpy_dtoh(dev, got, dy, n * sizeof(float)), 0);
  for (int i = 0; i < n; i++) {
    double ref = 2.5 * (double)x[i] + (double)y[i];
    assert_false(isnan(got[i]));
    num += (got[i] - ref) * (got[i] - ref);
    den += ref * ref;
  }
  assert_true(sqrt(num / den) < 1e-6);
  gpujit_mem_free(dev, dx);
  gpujit_mem_free(dev, dy);
  free(x);
  free(y);
  free(got);
}

static int count_kind(const gpujit_timing_result *r, size_t n, gpujit_activity_kind k)
{
  int c = 0;
  for (size_t i = 0; i < n; i++)
    c += r[i].kind == k;
  return c;
}

static void activities(gpujit_devptr a, gpujit_devptr b, float *host, int n)
{
  assert_int_equal(gpujit_memcpy_htod(dev, a, host, n * sizeof(float)), 0);
  assert_int_equal(gpujit_memset_d32(dev, b, 0, (size_t)n), 0);
  launch_saxpy(n, 1.0f, a, b);
  assert_int_equal(gpujit_memcpy_dtod(dev, b, a, n * sizeof(float)), 0);
  assert_int_equal(gpujit_memcpy_dtoh(dev, host, b, n * sizeof(float)), 0);
}

static void count_report(const gpujit_timing_result *r, size_t n, void *payload)
{
  (void)r;
  *(size_t *)payload += n;
}

static void test_gpu__filters_and_nesting(void **state)
{
  const int n = 1 << 16;
  float *host = calloc(n, sizeof(float));
  gpujit_devptr a, b;
  gpujit_timing_result *outer = NULL, *inner = NULL, *k = NULL;
  size_t no, ni, nk;
  (void)state;
  assert_int_equal(gpujit_mem_alloc(&a, dev, n * sizeof(float)), 0);
  assert_int_equal(gpujit_mem_alloc(&b, dev, n * sizeof(float)), 0);
  /* Kernel filter: only the kernel, none of the copies or the memset; the custom report sees it. */
  {
    size_t reported = 0;
    gpujit_timing_set_report(dev, count_report, &reported);
    assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_KERNEL), 0);
    activities(a, b, host, n);
    assert_int_equal(gpujit_timing_end(&k, &nk, dev), 0);
    gpujit_timing_set_report(dev, NULL, NULL);
    assert_int_equal(reported, 1);
  }
  assert_int_equal(nk, 1);
  assert_int_equal(k[0].kind, GPUJIT_ACTIVITY_KERNEL);
  assert_string_equal(k[0].name, "saxpy");
  assert_true(k[0].elapsed_ms > 0);
  /* Nested: the outer (all) sees everything, the inner (memcpy) only its copies. */
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_ALL), 0);
  activities(a, b, host, n);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_MEMCPY), 0);
  activities(a, b, host, n);
  assert_int_equal(gpujit_timing_end(&inner, &ni, dev), 0);
  assert_int_equal(gpujit_timing_end(&outer, &no, dev), 0);
  assert_int_equal(ni, 3);
  assert_int_equal(count_kind(inner, ni, GPUJIT_ACTIVITY_KERNEL), 0);
  assert_int_equal(count_kind(inner, ni, GPUJIT_ACTIVITY_MEMCPY_DTOD), 1);
  assert_int_equal(no, 10);
  assert_int_equal(count_kind(outer, no, GPUJIT_ACTIVITY_KERNEL), 2);
  assert_int_equal(count_kind(outer, no, GPUJIT_ACTIVITY_MEMSET), 2);
  assert_int_equal(count_kind(outer, no, GPUJIT_ACTIVITY_MEMCPY_HTOD), 2);
  assert_int_equal(count_kind(outer, no, GPUJIT_ACTIVITY_MEMCPY_DTOH), 2);
  for (size_t i = 1; i < no; i++)
    assert_true(outer[i].order > outer[i - 1].order); /* issue order */
  assert_int_equal(gpujit_timing_end(&k, &nk, dev), GPUJIT_EINVAL); /* nothing open */
  gpujit_free(k);
  gpujit_free(inner);
  gpujit_free(outer);
  gpujit_mem_free(dev, a);
  gpujit_mem_free(dev, b);
  free(host);
}

static void test_gpu__synchronized_timer(void **state)
{
  gpujit_timer *t = NULL;
  double host_ms = 0;
  gpujit_devptr d;
  long long cycles = 200LL * 1000 * 1000; /* ~0.1 s at ~2 GHz */
  unsigned g1[3] = {1, 1, 1}, b1[3] = {32, 1, 1};
  void *args[] = {&cycles, &d};
  (void)state;
  assert_int_equal(gpujit_mem_alloc(&d, dev, 64), 0);
  assert_int_equal(gpujit_timer_start(&t, dev, "spin", GPUJIT_TIMER_SYNCHRONIZE | GPUJIT_TIMER_NVTX, 0), 0);
  assert_int_equal(gpujit_launch(kernel("spin"), g1, b1, 0, args), 0);
  assert_int_equal(gpujit_timer_stop(t, &host_ms), 0);
  /* Synchronising at stop: the host time covers the whole kernel. */
  assert_true(host_ms > 50.0);
  gpujit_mem_free(dev, d);
}

static void test_gpu__graph_timed_whole(void **state)
{
  const int n = 1 << 20;
  gpujit_devptr x, y;
  gpujit_graph *g = NULL;
  gpujit_timing_result *r = NULL;
  size_t nr;
  (void)state;
  assert_int_equal(gpujit_mem_alloc(&x, dev, n * sizeof(float)), 0);
  assert_int_equal(gpujit_mem_alloc(&y, dev, n * sizeof(float)), 0);
  assert_int_equal(gpujit_timing_begin(dev, GPUJIT_TIMING_ALL), 0);
  assert_int_equal(gpujit_graph_begin(dev), 0);
  for (int i = 0; i < 3; i++)
    launch_saxpy(n, 1.0f, x, y);
  assert_int_equal(gpujit_graph_end(&g, dev, "three saxpys"), 0);
  assert_int_equal(gpujit_graph_launch(g), 0);
  assert_int_equal(gpujit_timing_end(&r, &nr, dev), 0);
  assert_int_equal(nr, 1); /* the captured launches are not timed one by one */
  assert_int_equal(r[0].kind, GPUJIT_ACTIVITY_GRAPH);
  assert_string_equal(r[0].name, "three saxpys");
  assert_true(r[0].elapsed_ms > 0);
  gpujit_free(r);
  gpujit_graph_free(g);
  gpujit_mem_free(dev, x);
  gpujit_mem_free(dev, y);
}

typedef struct bench_arg {
  gpujit_devptr x, y;
  int n;
} bench_arg;

static int bench_saxpy(void *p)
{
  bench_arg *b = p;
  launch_saxpy(b->n, 1.5f, b->x, b->y);
  return 0;
}

static void test_gpu__benchmark_stops(void **state)
{
  bench_arg b = {0, 0, 1 << 22};
  gpujit_bench_options o = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit_bench_result r;
  double *samples = NULL;
  (void)state;
  assert_int_equal(gpujit_mem_alloc(&b.x, dev, (size_t)b.n * 4), 0);
  assert_int_equal(gpujit_mem_alloc(&b.y, dev, (size_t)b.n * 4), 0);
  o.max_noise = 0.05;
  o.min_time_s = 0.2;
  assert_int_equal(gpujit_benchmark(&r, &samples, dev, bench_saxpy, &b, &o), 0);
  assert_int_equal(r.stop, GPUJIT_BENCH_STOP_NOISE);
  assert_true(r.gpu.n >= o.min_samples);
  assert_true(r.gpu.noise < 0.05);
  assert_true(r.elapsed_s >= 0.2);
  assert_true(r.gpu.min > 0 && r.gpu.min <= r.gpu.median && r.gpu.median <= r.gpu.max);
  assert_true(r.cpu.median > 0);
  gpujit_free(samples);
  /* An unreachable noise target stops at the timeout instead; with L2 flushed each sample. */
  o.max_noise = 1e-12;
  o.timeout_s = 0.5;
  o.l2_flush = 1;
  assert_int_equal(gpujit_benchmark(&r, NULL, dev, bench_saxpy, &b, &o), 0);
  assert_int_equal(r.stop, GPUJIT_BENCH_STOP_TIMEOUT);
  assert_true(r.elapsed_s >= 0.5 && r.elapsed_s < 5);
  { /* a fixed count, cupyx-style, through the several-device form: CPU then GPU samples */
    gpujit_bench_result rs[1];
    gpujit_device *devs[2] = {dev, dev};
    o.l2_flush = 0;
    o.min_samples = o.max_samples = 77;
    o.timeout_s = 0;
    o.min_time_s = 0;
    assert_int_equal(gpujit_benchmark_devices(rs, &samples, devs, 1, bench_saxpy, &b, &o), 0);
    assert_int_equal(rs[0].stop, GPUJIT_BENCH_STOP_MAX_SAMPLES);
    assert_int_equal(rs[0].gpu.n, 77);
    assert_int_equal(rs[0].cpu.n, 77);
    for (size_t i = 0; i < 77; i++)
      assert_true(samples[i] > 0 && samples[77 + i] >= rs[0].gpu.min && samples[77 + i] <= rs[0].gpu.max);
    gpujit_free(samples);
    assert_int_equal(gpujit_benchmark_devices(rs, NULL, devs, 2, bench_saxpy, &b, &o), GPUJIT_EINVAL);
    assert_non_null(strstr(gpujit_error_last(), "twice"));
  }
  gpujit_mem_free(dev, b.x);
  gpujit_mem_free(dev, b.y);
}

static void test_gpu__limits_and_attrs(void **state)
{
  gpujit_kernel_attrs at;
  unsigned grid[3] = {1, 1, 1}, big[3] = {32, 32, 2}, wide[3] = {2048, 1, 1}, huge_grid[3] = {1, 1u << 20, 1};
  (void)state;
  assert_int_equal(gpujit_kernel_attrs_get(kernel("saxpy"), &at), 0);
  assert_true(at.registers > 0);
  assert_int_equal(at.params, 4);
  assert_int_equal(at.param_bytes[0], 4);
  assert_int_equal(at.param_bytes[3], 8);
  assert_int_equal(gpujit_launch_check(kernel("saxpy"), grid, big, 0), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "2048 threads per block"));
  assert_int_equal(gpujit_launch_check(kernel("saxpy"), grid, wide, 0), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "block.x = 2048"));
  assert_int_equal(gpujit_launch_check(kernel("saxpy"), huge_grid, grid, 0), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "grid.y"));
  assert_int_equal(gpujit_kernel_get(NULL, loaded, "nope"), GPUJIT_EINVAL);
  {
    gpujit_kernel *k;
    assert_int_equal(gpujit_kernel_get(&k, loaded, "nope"), GPUJIT_ENOENT);
    assert_non_null(strstr(gpujit_error_last(), "saxpy"));
  }
}

/* The CLI's report and its trace agree: the same events, the same numbers. */
static void test_gpu__report_agrees_with_trace(void **state)
{
  char *dir = th_tmpdir(), *out, *trace_path = th_path(dir, "t.json"), *text;
  cJSON *report, *trace, *e;
  double median, *durs = calloc(1000, sizeof(double));
  size_t n = 0;
  gpujit_stats st;
  (void)state;
  assert_int_equal(th_run(&out, "cd '%s' && '%s' run --cache-dir c --json --time-trace=t.json --warmup 2 --repeat 25 "
                                "'%s/saxpy.cu' --grid 4096 --block 256 --arg i32:1048576 --arg f32:2 "
                                "--arg buf:f32:1048576:random --arg buf:f32:1048576:zeros 2>/dev/null",
                   dir, GPUJIT_CLI, GPUJIT_EXAMPLES_DIR),
                   0);
  report = cJSON_Parse(out);
  assert_non_null(report);
  median = cJSON_GetObjectItemCaseSensitive(
               cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(report, "kernels"), 0),
                                                "gpu_ms"),
               "median")
               ->valuedouble;
  text = th_read(trace_path, NULL);
  trace = cJSON_Parse(text);
  assert_non_null(trace);
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(trace, "traceEvents")) {
    cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name"), *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
    if (cJSON_IsString(cat) && !strcmp(cat->valuestring, "gpu") && !strcmp(name->valuestring, "saxpy"))
      durs[n++] = cJSON_GetObjectItemCaseSensitive(e, "dur")->valuedouble / 1e3;
  }
  assert_int_equal(n, 1 + 2 + 25); /* first launch, warm-up, timed */
  /* The timed launches are the last 25 on the GPU track; their median is the report's. */
  assert_int_equal(gpujit_stats_compute(&st, durs + 3, 25), 0);
  assert_float_equal(st.median, median, 1e-6 + median * 1e-6);
  assert_non_null(strstr(text, "\"load module\""));
  assert_non_null(strstr(text, "\"CUDA C++ Front-End\"")); /* compile, then execute, in one file */
  cJSON_Delete(report);
  cJSON_Delete(trace);
  free(text);
  free(out);
  free(durs);
  free(trace_path);
  th_rmrf(dir);
  free(dir);
}

/* A kernel fault is reported with the kernel's name, and the run stops cleanly. */
static void test_gpu__fault_named(void **state)
{
  char *dir = th_tmpdir(), *out;
  char *src = th_write(dir, "bad.cu", "extern \"C\" __global__ void wild(int *p) { p[threadIdx.x * 100000000] = 1; }\n");
  int rc;
  (void)state;
  rc = th_run(&out, "cd '%s' && '%s' run --no-cache bad.cu --grid 1 --block 32 --arg u64:16", dir, GPUJIT_CLI);
  if (rc != 7 || !strstr(out, "wild") || !strstr(out, "illegal"))
    fail_msg("rc %d, output:\n%s", rc, out);
  free(out);
  free(src);
  th_rmrf(dir);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gpu__saxpy_matches_cpu), cmocka_unit_test(test_gpu__filters_and_nesting),
      cmocka_unit_test(test_gpu__graph_timed_whole), cmocka_unit_test(test_gpu__benchmark_stops),
      cmocka_unit_test(test_gpu__synchronized_timer),
      cmocka_unit_test(test_gpu__limits_and_attrs),  cmocka_unit_test(test_gpu__report_agrees_with_trace),
      cmocka_unit_test(test_gpu__fault_named),
  };
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_source s = {"gpu_test.cu", SRC, sizeof(SRC) - 1};
  int rc;
  if (gpujit_device_open(&dev, -1) < 0) {
    printf("SKIPPED: no GPU: %s\n", gpujit_error_last());
    return 77;
  }
  if (gpujit_module_build_sources(&mod, &s, 1, &o) < 0 || gpujit_module_load(&loaded, dev, mod) < 0) {
    printf("setup failed: %s\n%s\n", gpujit_error_last(), gpujit_error_log());
    return 1;
  }
  if (getenv("TEST_FILTER"))
    cmocka_set_test_filter(getenv("TEST_FILTER"));
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  gpujit_loaded_free(loaded);
  gpujit_module_free(mod);
  gpujit_device_free(dev);
  return rc;
}
