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
  assert_non_null(strstr(gpujit_error_last(), "not ncu's --page source CSV"));
  assert_non_null(strstr(gpujit_error_last(), GPUJIT_NCU_SOURCE_COMMAND));
  assert_int_equal(gpujit_ncu_hotspots_parse(&h, "", 0, NULL, NULL), GPUJIT_EPARSE);
  assert_null(h);
}

/* Every export of one real report (ncu 2025.3, block_reduce on the H100): the CUDA view with SASS
 * gives lines, the default and the SASS view give instructions, the others name the command. */
static void test_ncu__every_export(void **state)
{
  gpujit_ncu_hotspots *h;
  const gpujit_ncu_line *l;
  double total = 0;
  (void)state;
  h = parse_file(GPUJIT_TEST_DATA "/ncu_export_cuda_sass.csv", NULL, NULL, 0);
  assert_int_equal(gpujit_ncu_hotspots_rows(h), GPUJIT_NCU_BY_LINE);
  l = gpujit_ncu_hotspots_line(h, 0);
  assert_int_equal(l->line, 232);
  assert_non_null(strstr(l->file, "warp_reduce_shfl.cuh"));
  assert_float_equal(l->value, 230, 0);
  assert_null(l->address);
  gpujit_ncu_hotspots_free(h);

  /* ncu's default source export is --print-source sass (the two files are the same bytes) */
  h = parse_file(GPUJIT_TEST_DATA "/ncu_export_default.csv", NULL, NULL, 0);
  assert_int_equal(gpujit_ncu_hotspots_rows(h), GPUJIT_NCU_BY_INSTRUCTION);
  assert_int_equal(gpujit_ncu_hotspots_count(h), 64);
  l = gpujit_ncu_hotspots_line(h, 0);
  assert_string_equal(l->address, "0x7f2ad97ac2e0");
  assert_string_equal(l->source, "      SHFL.DOWN P0, R5, R4, 0x1, 0x1f");
  assert_string_equal(l->function, "block_sum");
  assert_int_equal(l->line, 0);
  assert_float_equal(l->value, 180, 0);
  for (size_t i = 0; i < gpujit_ncu_hotspots_count(h); i++)
    total += gpujit_ncu_hotspots_line(h, i)->value;
  assert_float_equal(total, 433, 0);
  assert_float_equal(l->share, 180.0 / 433, 1e-12);
  gpujit_ncu_hotspots_free(h);
  h = parse_file(GPUJIT_TEST_DATA "/ncu_export_default.csv", NULL, "other_kernel", 0);
  assert_int_equal(gpujit_ncu_hotspots_count(h), 0);
  gpujit_ncu_hotspots_free(h);

  assert_null(parse_file(GPUJIT_TEST_DATA "/ncu_export_cuda.csv", NULL, NULL, GPUJIT_EPARSE));
  assert_non_null(strstr(gpujit_error_last(), "source text but no metrics"));
  assert_non_null(strstr(gpujit_error_last(), GPUJIT_NCU_SOURCE_COMMAND));
  assert_null(parse_file(GPUJIT_TEST_DATA "/ncu_export_ptx.csv", NULL, NULL, GPUJIT_EPARSE));
  assert_non_null(strstr(gpujit_error_last(), GPUJIT_NCU_SOURCE_COMMAND));
  assert_null(parse_file(GPUJIT_TEST_DATA "/ncu_export_details.csv", NULL, NULL, GPUJIT_EPARSE));
  assert_non_null(strstr(gpujit_error_last(), "--page details or --page raw"));
  assert_null(parse_file(GPUJIT_TEST_DATA "/ncu_export_raw.csv", NULL, NULL, GPUJIT_EPARSE));
  assert_non_null(strstr(gpujit_error_last(), GPUJIT_NCU_SOURCE_COMMAND));
}

/* A report is exported by ncu: a stand-in ncu checks its arguments and prints a real export. */
static void test_ncu__report_through_ncu(void **state)
{
  char *dir = th_tmpdir(), *fake, *rep, script[2048];
  gpujit_ncu_hotspots *h = NULL;
  (void)state;
  rep = th_write(dir, "k.ncu-rep", "NVR");
  snprintf(script, sizeof(script),
           "#!/bin/sh\n"
           "[ \"$*\" = \"-i %s --page source --csv --print-source cuda,sass\" ] || { echo \"==ERROR== bad args: $*\"; exit 1; }\n"
           "cat '%s'\n",
           rep, GPUJIT_TEST_DATA "/ncu_export_cuda_sass.csv");
  fake = th_write(dir, "ncu", script);
  chmod(fake, 0755);
  setenv("GPUJIT_NCU", fake, 1);
  assert_int_equal(gpujit_ncu_hotspots_from_report(&h, rep, NULL, NULL), 0);
  assert_int_equal(gpujit_ncu_hotspots_rows(h), GPUJIT_NCU_BY_LINE);
  assert_int_equal(gpujit_ncu_hotspots_line(h, 0)->line, 232);
  gpujit_ncu_hotspots_free(h);
  h = NULL;
  /* ncu's own failure is reported with its message */
  free(th_write(dir, "ncu", "#!/bin/sh\necho '==ERROR== Failed to open report' >&2\nexit 1\n"));
  assert_int_equal(gpujit_ncu_hotspots_from_report(&h, rep, NULL, NULL), GPUJIT_EIO);
  assert_non_null(strstr(gpujit_error_last(), "==ERROR== Failed to open report"));
  assert_null(h);
  /* an export without what the table needs says so, and names the report */
  snprintf(script, sizeof(script), "#!/bin/sh\ncat '%s'\n", GPUJIT_TEST_DATA "/ncu_export_cuda.csv");
  free(th_write(dir, "ncu", script));
  assert_int_equal(gpujit_ncu_hotspots_from_report(&h, rep, NULL, NULL), GPUJIT_EPARSE);
  assert_non_null(strstr(gpujit_error_last(), "k.ncu-rep"));
  /* no ncu where it was looked for; no report */
  setenv("GPUJIT_NCU", "/nonexistent/ncu", 1);
  assert_int_equal(gpujit_ncu_hotspots_from_report(&h, rep, NULL, NULL), GPUJIT_ENOENT);
  assert_non_null(strstr(gpujit_error_last(), "needs Nsight Compute's ncu"));
  assert_int_equal(gpujit_ncu_hotspots_from_report(&h, "/nonexistent.ncu-rep", NULL, NULL), GPUJIT_ENOENT);
  unsetenv("GPUJIT_NCU");
  free(fake);
  free(rep);
  th_rmrf(dir);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ncu__real_saxpy),
      cmocka_unit_test(test_ncu__hazards),
      cmocka_unit_test(test_ncu__bad_input),
      cmocka_unit_test(test_ncu__every_export),
      cmocka_unit_test(test_ncu__report_through_ncu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
