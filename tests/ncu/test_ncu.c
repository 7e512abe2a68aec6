/* The ncu hot-spot parser: a real ncu 2025.3 CSV from the H100, and the CSV hazards. */
#include "helpers.h"

#include "gpujit.h"

static gpujit_ncu_hotspots *parse_file(const char *path, const char *metric, const char *fn, int expect)
{
  size_t len;
  char *csv = th_read(path, &len);
  gpujit_ncu_hotspots *h = NULL;
  assert_non_null(csv);
  assert_int_equal(gpujit_ncu_hotspots_parse(&h, csv, len, metric, fn), expect);
  free(csv);
  return h;
}

static void test_ncu__real_saxpy(void **state)
{
  gpujit_ncu_hotspots *h = parse_file(GPUJIT_TEST_DATA "/ncu_saxpy_source.csv", NULL, NULL, 0);
  const gpujit_ncu_line *top;
  (void)state;
  assert_int_equal(gpujit_ncu_hotspots_count(h), 4);
  top = gpujit_ncu_hotspots_line(h, 0);
  assert_int_equal(top->line, 6);
  assert_string_equal(top->source, "y[i] = a * x[i] + y[i];");
  assert_string_equal(top->file, "/work/main/examples/saxpy.cu");
  assert_string_equal(top->function, "saxpy");
  assert_float_equal(top->value, 341, 0);
  assert_float_equal(top->share, 341.0 / (341 + 16 + 16 + 12), 1e-12);
  /* The kernel signature line keeps its unescaped quotes. */
  assert_string_equal(gpujit_ncu_hotspots_line(h, 1)->source,
                      "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y)");
  assert_null(gpujit_ncu_hotspots_line(h, 4));
  gpujit_ncu_hotspots_free(h);
  h = parse_file(GPUJIT_TEST_DATA "/ncu_saxpy_source.csv", "Instructions Executed", NULL, 0);
  assert_string_equal(gpujit_ncu_hotspots_metric(h), "Instructions Executed");
  assert_float_equal(gpujit_ncu_hotspots_line(h, 0)->value, 327680, 0);
  gpujit_ncu_hotspots_free(h);
}

static void test_ncu__hazards(void **state)
{
  gpujit_ncu_hotspots *h = parse_file(GPUJIT_TEST_DATA "/ncu_hazards.csv", NULL, NULL, 0);
  (void)state;
  assert_int_equal(gpujit_ncu_hotspots_count(h), 5); /* SASS rows skipped */
  assert_string_equal(gpujit_ncu_hotspots_line(h, 0)->source, "  y[i] = x[i];");
  /* A "," inside the source text: the extra field goes back to the source. */
  assert_string_equal(gpujit_ncu_hotspots_line(h, 1)->source, "  const char *s = \"a\",\"b\";");
  assert_float_equal(gpujit_ncu_hotspots_line(h, 1)->value, 30, 0);
  assert_string_equal(gpujit_ncu_hotspots_line(h, 2)->source, "  printf(\"n=%d\\n\", n);");
  /* Shares are per function; '-' counts as no value. */
  assert_float_equal(gpujit_ncu_hotspots_line(h, 0)->share, 0.6, 1e-12);
  assert_string_equal(gpujit_ncu_hotspots_line(h, 3)->function, "k2");
  assert_float_equal(gpujit_ncu_hotspots_line(h, 3)->share, 1.0, 0);
  assert_float_equal(gpujit_ncu_hotspots_line(h, 4)->value, 0, 0);
  gpujit_ncu_hotspots_free(h);
  h = parse_file(GPUJIT_TEST_DATA "/ncu_hazards.csv", NULL, "k2", 0);
  assert_int_equal(gpujit_ncu_hotspots_count(h), 1);
  assert_int_equal(gpujit_ncu_hotspots_line(h, 0)->line, 9);
  gpujit_ncu_hotspots_free(h);
}

static void test_ncu__bad_input(void **state)
{
  gpujit_ncu_hotspots *h = (gpujit_ncu_hotspots *)0x1;
  (void)state;
  assert_null(parse_file(GPUJIT_TEST_DATA "/ncu_hazards.csv", "No Such Metric", NULL, GPUJIT_EPARSE));
  assert_non_null(strstr(gpujit_error_last(), "no metric column \"No Such Metric\""));
  assert_null(parse_file(GPUJIT_TEST_DATA "/gpujit_small.json", NULL, NULL, GPUJIT_EPARSE));
  assert_non_null(strstr(gpujit_error_last(), "not ncu --page source CSV"));
  assert_int_equal(gpujit_ncu_hotspots_parse(&h, "", 0, NULL, NULL), GPUJIT_EPARSE);
  assert_null(h);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ncu__real_saxpy),
      cmocka_unit_test(test_ncu__hazards),
      cmocka_unit_test(test_ncu__bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
