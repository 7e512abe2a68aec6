/* `trace analyze` aggregates on recorded traces, with exact expected values, and bad input. */
#include "helpers.h"

#include "gpujit.h"

static const gpujit_trace_stat *row(gpujit_trace_analysis *a, gpujit_trace_table t, const char *name)
{
  for (size_t i = 0; i < gpujit_trace_analysis_count(a, t); i++) {
    const gpujit_trace_stat *r = gpujit_trace_analysis_row(a, t, i);
    if (strcmp(r->name, name) == 0)
      return r;
  }
  fail_msg("no row '%s' in %s", name, gpujit_trace_table_name(t));
  return NULL;
}

static void expect(gpujit_trace_analysis *a, gpujit_trace_table t, const char *name, double total, uint64_t count)
{
  const gpujit_trace_stat *r = row(a, t, name);
  assert_float_equal(r->total_us, total, 1e-9);
  assert_int_equal(r->count, count);
}

static gpujit_trace_analysis *analyze(const char *const *files, size_t n)
{
  gpujit_trace_analysis *a = NULL;
  assert_int_equal(gpujit_trace_analysis_create(&a), 0);
  for (size_t i = 0; i < n; i++)
    if (gpujit_trace_analysis_add_file(a, files[i]) != 0)
      fail_msg("%s", gpujit_error_last());
  return a;
}

static void test_analyze__gpujit_trace(void **state)
{
  const char *files[] = {GPUJIT_TEST_DATA "/gpujit_small.json"};
  gpujit_trace_analysis *a = analyze(files, 1);
  size_t nfiles, events;
  (void)state;
  expect(a, GPUJIT_TRACE_PHASES, "front end", 300, 1);
  expect(a, GPUJIT_TRACE_PHASES, "NVVM optimizer", 70, 1); /* LibNVVM 100 less CodeGen 30 */
  expect(a, GPUJIT_TRACE_PHASES, "codegen", 30, 1);
  expect(a, GPUJIT_TRACE_PHASES, "ptxas", 80, 1);
  expect(a, GPUJIT_TRACE_PHASES, "link", 200, 1);
  expect(a, GPUJIT_TRACE_PHASES, "gpujit overhead", 300, 1); /* 1000 - 500 compile - 200 link */
  assert_int_equal(gpujit_trace_analysis_count(a, GPUJIT_TRACE_PHASES), 6);
  expect(a, GPUJIT_TRACE_HEADERS, "h1.h", 100, 1);
  expect(a, GPUJIT_TRACE_HEADERS, "h2.h", 50, 1);
  expect(a, GPUJIT_TRACE_TEMPLATES, "foo<$>", 40, 1);
  expect(a, GPUJIT_TRACE_TEMPLATES, "bar<$>", 20, 1);
  expect(a, GPUJIT_TRACE_INSTANTIATIONS, "foo<int>", 40, 1);
  expect(a, GPUJIT_TRACE_INSTANTIATIONS, "bar<float, baz<int>>", 20, 1);
  expect(a, GPUJIT_TRACE_FUNCTIONS, "ptxas: compilation unit 1", 50, 1);
  expect(a, GPUJIT_TRACE_MODULES, "m1", 1000, 1);
  assert_int_equal(gpujit_trace_analysis_count(a, GPUJIT_TRACE_MODULES), 1);
  /* Sorted, largest first. */
  assert_string_equal(gpujit_trace_analysis_row(a, GPUJIT_TRACE_HEADERS, 0)->name, "h1.h");
  assert_null(gpujit_trace_analysis_row(a, GPUJIT_TRACE_HEADERS, 2));
  gpujit_trace_analysis_totals(a, &nfiles, &events);
  assert_int_equal(nfiles, 1);
  assert_int_equal(events, 14);
  gpujit_trace_analysis_free(a);
}

static void test_analyze__many_and_raw(void **state)
{
  const char *files[] = {GPUJIT_TEST_DATA "/gpujit_small.json", GPUJIT_TEST_DATA "/gpujit_small.json",
                         GPUJIT_TEST_DATA "/nvrtc_array.json", GPUJIT_TEST_DATA "/nvrtc_saxpy.json"};
  gpujit_trace_analysis *a = analyze(files, 4);
  (void)state;
  /* Two gpujit traces, the array-form raw trace and a real NVRTC 13.0 trace of saxpy. */
  expect(a, GPUJIT_TRACE_PHASES, "front end", 300 + 300 + 10 + 29083, 4);
  expect(a, GPUJIT_TRACE_PHASES, "NVVM optimizer", 70 + 70 + (13369 - 1917), 3);
  expect(a, GPUJIT_TRACE_PHASES, "codegen", 30 + 30 + 1917, 3);
  expect(a, GPUJIT_TRACE_PHASES, "ptxas", 80 + 80 + 38039, 3);
  expect(a, GPUJIT_TRACE_HEADERS, "h1.h", 204, 3);
  expect(a, GPUJIT_TRACE_HEADERS, "__nv_nvrtc_builtin_header.h", 18912, 1);
  expect(a, GPUJIT_TRACE_TEMPLATES, "scale<$>", 121, 1);
  expect(a, GPUJIT_TRACE_INSTANTIATIONS, "scale<float>(float *, float, int)", 121, 1);
  expect(a, GPUJIT_TRACE_FUNCTIONS, "IR generation: saxpy", 1786, 1);
  expect(a, GPUJIT_TRACE_MODULES, "m1", 2000, 2);
  expect(a, GPUJIT_TRACE_MODULES, "/src/b.cu", 10, 1);
  expect(a, GPUJIT_TRACE_MODULES, "/tmp/exp/saxpy.cu", 29083 + 13369 + 38039, 1);
  gpujit_trace_analysis_free(a);
}

/* NVRTC sometimes writes LibNVVM without its sub-phases: LibNVVM then counts as the optimizer. */
static void test_analyze__nvvm_without_phases(void **state)
{
  const char *files[] = {GPUJIT_TEST_DATA "/nvrtc_nvvm_without_phases.json"};
  gpujit_trace_analysis *a = analyze(files, 1);
  (void)state;
  expect(a, GPUJIT_TRACE_PHASES, "NVVM optimizer", 186000, 1);
  expect(a, GPUJIT_TRACE_PHASES, "front end", 300, 1);
  expect(a, GPUJIT_TRACE_PHASES, "ptxas", 50, 1);
  gpujit_trace_analysis_free(a);
}

static void test_analyze__empty_is_fine(void **state)
{
  const char *files[] = {GPUJIT_TEST_DATA "/empty.json"};
  gpujit_trace_analysis *a = analyze(files, 1);
  (void)state;
  for (int t = 0; t < GPUJIT_TRACE_TABLE_COUNT; t++)
    assert_int_equal(gpujit_trace_analysis_count(a, (gpujit_trace_table)t), 0);
  gpujit_trace_analysis_free(a);
}

static void expect_bad(const char *file, int code, const char *needle)
{
  gpujit_trace_analysis *a = NULL;
  size_t files;
  assert_int_equal(gpujit_trace_analysis_create(&a), 0);
  assert_int_equal(gpujit_trace_analysis_add_file(a, file), code);
  if (!strstr(gpujit_error_last(), needle) || !strstr(gpujit_error_last(), file))
    fail_msg("message '%s' should name '%s' and say '%s'", gpujit_error_last(), file, needle);
  gpujit_trace_analysis_totals(a, &files, NULL);
  assert_int_equal(files, 0); /* nothing added from a bad file */
  assert_int_equal(gpujit_trace_analysis_count(a, GPUJIT_TRACE_PHASES), 0);
  gpujit_trace_analysis_free(a);
}

static void test_analyze__bad_input(void **state)
{
  (void)state;
  expect_bad(GPUJIT_TEST_DATA "/malformed.json", GPUJIT_EPARSE, "not valid JSON");
  expect_bad(GPUJIT_TEST_DATA "/not_a_trace.json", GPUJIT_EPARSE, "no \"traceEvents\"");
  expect_bad(GPUJIT_TEST_DATA "/bad_event.json", GPUJIT_EPARSE, "event 1 needs");
  expect_bad(GPUJIT_TEST_DATA "/scalar.json", GPUJIT_EPARSE, "expected a JSON object or array");
  expect_bad(GPUJIT_TEST_DATA "/missing.json", GPUJIT_ENOENT, "No such file");
  expect_bad(GPUJIT_EXAMPLES_DIR "/saxpy.cu", GPUJIT_EPARSE, "not valid JSON");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_analyze__gpujit_trace),
      cmocka_unit_test(test_analyze__many_and_raw),
      cmocka_unit_test(test_analyze__nvvm_without_phases),
      cmocka_unit_test(test_analyze__empty_is_fine),
      cmocka_unit_test(test_analyze__bad_input),
  };
  if (getenv("TEST_FILTER"))
    cmocka_set_test_filter(getenv("TEST_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
