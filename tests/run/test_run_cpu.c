/* Run layer pieces that need no GPU: argument specs, host fills, statistics, the stopping
 * rule, report formatting from recorded results, and the no-driver path. */
#include <math.h>
#include <time.h>

#include "helpers.h"

#include "gpujit.h"

static void test_run__scalar_specs(void **state)
{
  gpujit_arg_spec s;
  (void)state;
  assert_int_equal(gpujit_arg_spec_parse(&s, "i32:1048576"), 0);
  assert_int_equal(s.type, GPUJIT_ARG_I32);
  assert_int_equal(s.value.i32, 1048576);
  assert_int_equal(gpujit_arg_size(&s), 4);
  assert_int_equal(gpujit_arg_spec_parse(&s, "f32:2.5"), 0);
  assert_float_equal(s.value.f32, 2.5f, 0);
  assert_int_equal(gpujit_arg_spec_parse(&s, "u64:0x10"), 0);
  assert_int_equal(s.value.u64, 16);
  assert_int_equal(gpujit_arg_size(&s), 8);
  assert_int_equal(gpujit_arg_spec_parse(&s, "f64:-1e-3"), 0);
  assert_float_equal(s.value.f64, -1e-3, 0);
  assert_int_equal(gpujit_arg_spec_parse(&s, "i64:-9000000000"), 0);
  assert_int_equal(s.value.i64, -9000000000LL);
}

static void expect_bad(const char *spec, const char *needle)
{
  gpujit_arg_spec s;
  assert_int_equal(gpujit_arg_spec_parse(&s, spec), GPUJIT_EINVAL);
  if (!strstr(gpujit_error_last(), needle))
    fail_msg("'%s': message '%s' lacks '%s'", spec, gpujit_error_last(), needle);
}

static void test_run__bad_specs(void **state)
{
  (void)state;
  expect_bad("i32:3000000000", "is not a i32");
  expect_bad("u32:-1", "is negative");
  expect_bad("f32:abc", "is not a number");
  expect_bad("f32:1e39", "out of f32 range");
  expect_bad("q8:1", "unknown type 'q8'");
  expect_bad("1048576", "expected TYPE:VALUE");
  expect_bad("buf:f16:10", "unknown element type 'f16'");
  expect_bad("buf:f32:0", "element count must be");
  expect_bad("buf:f32", "buf:TYPE:COUNT");
  expect_bad("buf:f32:10:sometimes", "is not zeros, ones, iota, random");
  expect_bad("buf:f32:10:zeros,colour=red", "unknown option 'colour=red'");
  expect_bad("@", "'@' needs a buffer name");
  expect_bad("i32:", "missing value");
  /* found by fuzz_arg_spec: an init value beyond the element type was converted undefined */
  expect_bad("buf:u64:4:822222222222222222222222", "init value 822222222222222222222222 does not fit");
  expect_bad("buf:i32:4:2.5", "does not fit");
  expect_bad("buf:u32:4:-1", "does not fit");
  expect_bad("buf:i32:4:nan", "does not fit");
  expect_bad("buf:f32:4:1e39", "does not fit");
}

static void test_run__buffer_specs_and_fill(void **state)
{
  gpujit_arg_spec s, t;
  float f[8], g[8];
  int32_t n[5];
  (void)state;
  assert_int_equal(gpujit_arg_spec_parse(&s, "buf:f32:8:random:7,name=x,out=checksum"), 0);
  assert_int_equal(s.type, GPUJIT_ARG_BUFFER);
  assert_int_equal(s.elem, GPUJIT_ARG_F32);
  assert_int_equal(s.count, 8);
  assert_int_equal(s.init, GPUJIT_INIT_RANDOM);
  assert_int_equal(s.seed, 7);
  assert_string_equal(s.name, "x");
  assert_int_equal(s.out_checksum, 1);
  assert_int_equal(gpujit_arg_size(&s), 8);
  gpujit_arg_fill(f, &s);
  gpujit_arg_fill(g, &s);
  assert_memory_equal(f, g, sizeof(f)); /* the same seed gives the same data */
  for (int i = 0; i < 8; i++)
    assert_true(f[i] >= 0 && f[i] < 1);
  assert_true(f[0] != f[1]);
  assert_int_equal(gpujit_arg_spec_parse(&t, "buf:f32:8:random:8"), 0);
  gpujit_arg_fill(g, &t);
  assert_true(memcmp(f, g, sizeof(f)) != 0);
  assert_int_equal(gpujit_arg_spec_parse(&t, "buf:i32:5:iota,out=y.bin"), 0);
  assert_string_equal(t.out_file, "y.bin");
  gpujit_arg_fill(n, &t);
  for (int i = 0; i < 5; i++)
    assert_int_equal(n[i], i);
  assert_int_equal(gpujit_arg_spec_parse(&t, "buf:f32:4:2.5"), 0);
  assert_int_equal(t.init, GPUJIT_INIT_VALUE);
  gpujit_arg_fill(f, &t);
  assert_float_equal(f[3], 2.5f, 0);
  /* the largest values each type holds are kept exactly; f32 takes infinity */
  {
    uint64_t u[2];
    int64_t i64[2];
    assert_int_equal(gpujit_arg_spec_parse(&t, "buf:u64:2:18446744073709549568"), 0);
    gpujit_arg_fill(u, &t);
    assert_true(u[1] == 18446744073709549568ULL);
    assert_int_equal(gpujit_arg_spec_parse(&t, "buf:i64:2:-9223372036854775808"), 0);
    gpujit_arg_fill(i64, &t);
    assert_true(i64[0] == INT64_MIN);
    assert_int_equal(gpujit_arg_spec_parse(&t, "buf:f32:4:inf"), 0);
    gpujit_arg_fill(f, &t);
    assert_true(isinf(f[2]));
  }
  assert_int_equal(gpujit_arg_spec_parse(&t, "@x"), 0);
  assert_int_equal(t.type, GPUJIT_ARG_REF);
  assert_string_equal(t.name, "x");
}

static void test_run__stats(void **state)
{
  const double s[] = {4, 1, 3, 2, 10};
  gpujit_stats st;
  (void)state;
  assert_int_equal(gpujit_stats_compute(&st, s, 5), 0);
  assert_int_equal(st.n, 5);
  assert_float_equal(st.min, 1, 0);
  assert_float_equal(st.max, 10, 0);
  assert_float_equal(st.median, 3, 0);
  assert_float_equal(st.mean, 4, 1e-12);
  /* deviations from 4: 0, -3, -1, -2, 6 → squares sum 50; sample variance 50 / 4 */
  assert_float_equal(st.stdev, sqrt(12.5), 1e-12);
  /* |x - median 3| = 1, 2, 0, 1, 7 → MAD 1 → noise 1.4826 / 3 */
  assert_float_equal(st.noise, 1.4826 / 3, 1e-12);
  assert_int_equal(gpujit_stats_compute(&st, s, 4), 0);
  assert_float_equal(st.median, 2.5, 0);
  assert_int_equal(gpujit_stats_compute(&st, s, 0), GPUJIT_EINVAL);
}

static void test_run__stop_rule(void **state)
{
  gpujit_bench_options o = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit_bench_stop why = (gpujit_bench_stop)-1;
  double flat[20], noisy[20];
  (void)state;
  for (int i = 0; i < 20; i++) {
    flat[i] = 1.0 + (i % 2) * 1e-4;
    noisy[i] = i % 2 ? 1.0 : 2.0;
  }
  o.min_samples = 10;
  o.min_time_s = 0.5;
  /* Quiet samples stop, but only after min_samples and min_time. */
  assert_int_equal(gpujit_bench_should_stop(flat, 9, 1.0, &o, &why), 0);
  assert_int_equal(gpujit_bench_should_stop(flat, 20, 0.1, &o, &why), 0);
  assert_int_equal(gpujit_bench_should_stop(flat, 20, 1.0, &o, &why), 1);
  assert_int_equal(why, GPUJIT_BENCH_STOP_NOISE);
  /* Noisy samples run on until the timeout or the sample cap. */
  assert_int_equal(gpujit_bench_should_stop(noisy, 20, 1.0, &o, &why), 0);
  assert_int_equal(gpujit_bench_should_stop(noisy, 20, 15.0, &o, &why), 1);
  assert_int_equal(why, GPUJIT_BENCH_STOP_TIMEOUT);
  o.max_samples = 20;
  assert_int_equal(gpujit_bench_should_stop(noisy, 20, 1.0, &o, &why), 1);
  assert_int_equal(why, GPUJIT_BENCH_STOP_MAX_SAMPLES);
}

static void test_run__report_from_recorded(void **state)
{
  gpujit_timing_result r[4];
  char *text = NULL;
  (void)state;
  memset(r, 0, sizeof(r));
  for (int i = 0; i < 4; i++) {
    r[i].order = (uint64_t)i;
    r[i].device = i == 3 ? 1 : 0;
  }
  snprintf(r[0].name, sizeof(r[0].name), "memcpy HtoD");
  r[0].kind = GPUJIT_ACTIVITY_MEMCPY_HTOD;
  r[0].elapsed_ms = 0.5;
  snprintf(r[1].name, sizeof(r[1].name), "saxpy");
  r[1].elapsed_ms = 0.25;
  snprintf(r[2].name, sizeof(r[2].name), "saxpy");
  r[2].elapsed_ms = 0.75;
  snprintf(r[3].name, sizeof(r[3].name), "saxpy");
  r[3].elapsed_ms = 1.0;
  assert_int_equal(gpujit_timing_format(&text, r, 4, GPUJIT_REPORT_ALL), 0);
  assert_non_null(strstr(text, "timeline"));
  assert_non_null(strstr(text, "     1 kernel           0.250000  saxpy"));
  assert_non_null(strstr(text, "    2.000000        3     0.666667  saxpy")); /* activity: total, count, mean */
  assert_non_null(strstr(text, "    1.500000        3  device 0"));            /* device summary */
  assert_non_null(strstr(text, "    1.000000        1  device 1"));
  gpujit_free(text);
  /* CUPTI results: a missing record says so and counts nowhere; a graph's nodes are inside its time */
  r[1].missing = 1;
  r[1].elapsed_ms = 0;
  r[2].graph_node = 7;
  snprintf(r[2].name, sizeof(r[2].name), "g: saxpy");
  r[3].device = 0;
  r[3].kind = GPUJIT_ACTIVITY_GRAPH;
  snprintf(r[3].name, sizeof(r[3].name), "g");
  assert_int_equal(gpujit_timing_format(&text, r, 4, GPUJIT_REPORT_ALL), 0);
  assert_non_null(strstr(text, "     1 kernel          no record  saxpy"));
  assert_null(strstr(text, "        1     0.000000  saxpy")); /* no activity row for the missing one */
  assert_non_null(strstr(text, "    0.750000        1     0.750000  g: saxpy"));
  assert_non_null(strstr(text, "    1.500000        2  device 0")); /* the copy and the graph, not its node */
  gpujit_free(text);
}

static void test_run__scoped_timer(void **state)
{
  gpujit_timer *t = NULL;
  double ms = -1;
  struct timespec ts = {0, 20 * 1000 * 1000};
  (void)state;
  assert_int_equal(gpujit_timer_start(&t, NULL, "sleep", GPUJIT_TIMER_NVTX, 0xff00ff00u), 0);
  nanosleep(&ts, NULL);
  assert_int_equal(gpujit_timer_stop(t, &ms), 0);
  assert_true(ms >= 19.0 && ms < 2000.0);
  assert_int_equal(gpujit_timer_start(NULL, NULL, "x", 0, 0), GPUJIT_EINVAL);
  assert_int_equal(gpujit_timer_stop(NULL, &ms), GPUJIT_EINVAL);
}

static void test_run__no_driver(void **state)
{
  int n = -1, err;
  gpujit_device *dev = (gpujit_device *)0x1;
  (void)state;
  if (getenv("GPUJIT_TEST_HAVE_GPU"))
    skip();
  err = gpujit_device_count(&n);
  if (err == 0 && n > 0)
    skip(); /* a GPU machine: this path is for machines without one */
  assert_true(err == GPUJIT_ENODRIVER || err == GPUJIT_ENODEVICE || n == 0);
  err = gpujit_device_open(&dev, -1);
  assert_true(err == GPUJIT_ENODRIVER || err == GPUJIT_ENODEVICE);
  assert_null(dev);
  assert_non_null(strstr(gpujit_error_last(), "CUDA"));
  /* the calls the Python package makes before a launch say the same */
  n = 7;
  err = gpujit_device_current(&n);
  assert_true(err == GPUJIT_ENODRIVER || err == GPUJIT_ENODEVICE);
  assert_int_equal(n, -1);
  n = 7;
  err = gpujit_pointer_device(&n, 0x1000);
  assert_true(err == GPUJIT_ENODRIVER || err == GPUJIT_ENODEVICE);
  assert_int_equal(n, -1);
}

/* Arguments the new device, capture and benchmark calls refuse, everywhere. */
static void test_run__bad_arguments(void **state)
{
  gpujit_capture *cap = (gpujit_capture *)0x1;
  gpujit_bench_result r[2];
  gpujit_timing_result *res = (gpujit_timing_result *)0x1;
  gpujit_device *devs[GPUJIT_BENCH_MAX_DEVICES + 1] = {NULL};
  size_t n = 9;
  double *samples = (double *)0x1;
  (void)state;
  assert_int_equal(gpujit_device_set_stream(NULL, GPUJIT_STREAM_LEGACY), GPUJIT_EINVAL);
  assert_null(gpujit_device_stream(NULL));
  assert_int_equal(gpujit_device_synchronize(NULL), GPUJIT_EINVAL);
  assert_int_equal(gpujit_device_current(NULL), GPUJIT_EINVAL);
  assert_int_equal(gpujit_capture_begin(&cap, 0), GPUJIT_EINVAL);
  assert_null(cap);
  assert_non_null(strstr(gpujit_error_last(), "selects nothing"));
  assert_int_equal(gpujit_capture_begin(NULL, GPUJIT_TIMING_ALL), GPUJIT_EINVAL);
  assert_int_equal(gpujit_capture_end(NULL, &res, &n, NULL), GPUJIT_EINVAL);
  assert_null(res);
  assert_int_equal(n, 0);
  assert_int_equal(gpujit_benchmark_devices(r, &samples, devs, 0, NULL, NULL, NULL), GPUJIT_EINVAL);
  assert_null(samples);
  assert_int_equal(gpujit_benchmark_devices(r, NULL, devs, GPUJIT_BENCH_MAX_DEVICES + 1, (gpujit_bench_fn)1, NULL, NULL),
                   GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "at most"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_run__scalar_specs),   cmocka_unit_test(test_run__bad_specs),
      cmocka_unit_test(test_run__buffer_specs_and_fill), cmocka_unit_test(test_run__stats),
      cmocka_unit_test(test_run__stop_rule),      cmocka_unit_test(test_run__report_from_recorded),
      cmocka_unit_test(test_run__scoped_timer),
      cmocka_unit_test(test_run__no_driver),
      cmocka_unit_test(test_run__bad_arguments),
  };
  if (getenv("TEST_FILTER"))
    cmocka_set_test_filter(getenv("TEST_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
