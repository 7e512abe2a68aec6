/* Building modules: images, kernels, lowered names, the record, LTO link, line info, #line mapping, errors. */
#include <pthread.h>

#include "helpers.h"

#include "gpujit.h"

#define SAXPY                                                                          \
  "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y)\n"   \
  "{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + y[i];\n}\n"

static gpujit_module *build_str(const char *name, const char *src, gpujit_module_options *o)
{
  gpujit_source s = {name, src, strlen(src)};
  gpujit_module *m = NULL;
  int err = gpujit_module_build_sources(&m, &s, 1, o);
  if (err)
    fail_msg("build failed: %s\n%s", gpujit_error_last(), gpujit_error_log());
  return m;
}

static void test_build__saxpy_cubin(void **state)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m;
  const void *img;
  size_t size;
  gpujit_module_timings t;
  (void)state;
  o.arch = "sm_90";
  m = build_str("/virtual/dir/saxpy.cu", SAXPY, &o);
  img = gpujit_module_image(m, &size);
  assert_true(size > 1000);
  assert_memory_equal(img, "\177ELF", 4);
  assert_int_equal(gpujit_module_output(m), GPUJIT_OUTPUT_CUBIN);
  assert_string_equal(gpujit_module_arch(m), "sm_90");
  assert_string_equal(gpujit_module_name(m), "saxpy");
  assert_int_equal(gpujit_module_kernel_count(m), 1);
  assert_string_equal(gpujit_module_kernel(m, 0), "saxpy");
  assert_null(gpujit_module_kernel(m, 1));
  /* lineinfo is on by default: both line tables are there, naming the user's file. */
  assert_true(th_elf_has_section(img, size, ".debug_line"));
  assert_true(th_elf_has_section(img, size, ".nv_debug_line_sass"));
  assert_non_null(memmem(img, size, "/virtual/dir", 12));
  assert_non_null(memmem(img, size, "saxpy.cu", 8));
  gpujit_module_timings_get(m, &t);
  assert_true(t.compile_ms > 0);
  assert_true(t.total_ms >= t.compile_ms);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_NONE);
  gpujit_module_free(m);
  gpujit_module_free(NULL);
}

static void test_build__no_lineinfo(void **state)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m;
  const void *img;
  size_t size;
  (void)state;
  o.arch = "sm_90";
  o.lineinfo = 0;
  m = build_str("saxpy.cu", SAXPY, &o);
  img = gpujit_module_image(m, &size);
  assert_false(th_elf_has_section(img, size, ".debug_line"));
  assert_false(th_elf_has_section(img, size, ".nv_debug_line_sass"));
  gpujit_module_free(m);
}

static void test_build__ptx_and_ltoir(void **state)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m;
  const char *img;
  size_t size;
  (void)state;
  o.arch = "compute_90";
  m = build_str("saxpy.cu", SAXPY, &o);
  img = gpujit_module_image(m, &size);
  assert_int_equal(gpujit_module_output(m), GPUJIT_OUTPUT_PTX);
  assert_non_null(strstr(img, ".entry saxpy("));
  assert_int_equal(strlen(img), size);
  assert_string_equal(gpujit_module_kernel(m, 0), "saxpy");
  gpujit_module_free(m);

  o.arch = "sm_90";
  o.output = GPUJIT_OUTPUT_LTOIR;
  m = build_str("saxpy.cu", SAXPY, &o);
  gpujit_module_image(m, &size);
  assert_int_equal(gpujit_module_output(m), GPUJIT_OUTPUT_LTOIR);
  assert_true(size > 100);
  assert_int_equal(gpujit_module_kernel_count(m), 0);
  gpujit_module_free(m);
}

static void test_build__name_expressions(void **state)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *exprs[] = {"scale<float>", "scale<double>"};
  const char *path = GPUJIT_EXAMPLES_DIR "/scale.cu", *lowered;
  gpujit_module *m = NULL;
  (void)state;
  o.arch = "sm_90";
  o.name_expressions = exprs;
  o.name_expressions_count = 2;
  assert_int_equal(gpujit_module_build_files(&m, &path, 1, &o), 0);
  assert_string_equal(gpujit_module_lowered_name(m, "scale<float>"), "_Z5scaleIfEviT_PS0_");
  assert_string_equal(gpujit_module_lowered_name(m, "scale<double>"), "_Z5scaleIdEviT_PS0_");
  assert_null(gpujit_module_lowered_name(m, "scale<int>"));
  assert_int_equal(gpujit_module_name_expression_count(m), 2);
  assert_string_equal(gpujit_module_name_expression(m, 1, &lowered), "scale<double>");
  assert_string_equal(lowered, "_Z5scaleIdEviT_PS0_");
  assert_int_equal(gpujit_module_kernel_count(m), 2);
  gpujit_module_free(m);
}

/* The module's record: every entry with its key and kind, nested objects closed, in order. */
typedef struct record_walk {
  char text[2048]; /* "key:kind " for each entry; "{" and "}" around objects */
  int depth, stop_after;
} record_walk;

static int walk(const char *key, gpujit_module_record_kind kind, const gpujit_module_record_value *v, void *payload)
{
  record_walk *w = payload;
  size_t at = strlen(w->text);
  if (w->stop_after && --w->stop_after == 0)
    return GPUJIT_ECANCELLED;
  if (kind == GPUJIT_MODULE_RECORD_END) {
    snprintf(w->text + at, sizeof(w->text) - at, "} ");
    w->depth--;
    return 0;
  }
  if (w->depth == 0 || kind == GPUJIT_MODULE_RECORD_OBJECT || kind == GPUJIT_MODULE_RECORD_STRINGS)
    snprintf(w->text + at, sizeof(w->text) - at, "%s%s ", key, kind == GPUJIT_MODULE_RECORD_OBJECT ? "{" : "");
  w->depth += kind == GPUJIT_MODULE_RECORD_OBJECT;
  if (kind == GPUJIT_MODULE_RECORD_STRINGS)
    assert_int_equal(v->count, 2); /* scale<float>, scale<double> */
  return 0;
}

static void test_build__record(void **state)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *exprs[] = {"scale<float>", "scale<double>"};
  const char *path = GPUJIT_EXAMPLES_DIR "/scale.cu";
  gpujit_module *m = NULL;
  record_walk w = {"", 0, 0};
  gpujit_module_lean lean;
  (void)state;
  o.arch = "sm_90";
  o.name_expressions = exprs;
  o.name_expressions_count = 2;
  assert_int_equal(gpujit_module_build_files(&m, &path, 1, &o), 0);
  /* the keys of a module's record in `gpujit build --json` (docs/json.md), in its order; no
   * "key" or "miss_reason" without a cache */
  gpujit_module_lean_get(m, &lean); /* the lean pass runs where the toolkit has a ptxas */
  assert_int_equal(gpujit_module_record(m, walk, &w), 0);
  assert_string_equal(w.text, lean.applied ? "arch kind size kernels lowered_names{ } lean{ } time_ms{ } "
                                           : "arch kind size kernels lowered_names{ } time_ms{ } ");
  assert_int_equal(w.depth, 0);
  w = (record_walk){"", 0, 3}; /* a callback's error stops the walk and comes back */
  assert_int_equal(gpujit_module_record(m, walk, &w), GPUJIT_ECANCELLED);
  assert_int_equal(gpujit_module_record(NULL, walk, &w), GPUJIT_EINVAL);
  assert_int_equal(gpujit_module_record(m, NULL, NULL), GPUJIT_EINVAL);
  gpujit_module_free(m);
}

static void test_build__lto_link(void **state)
{
  const char *paths[] = {GPUJIT_EXAMPLES_DIR "/lto/main.cu", GPUJIT_EXAMPLES_DIR "/lto/helper.cu"};
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  char *dir = th_tmpdir(), *out = th_path(dir, "lto.cubin"), *listing;
  const void *img;
  size_t size;
  bool a = false, b = false;
  (void)state;
  o.arch = "sm_90";
  assert_int_equal(gpujit_module_build_files(&m, paths, 2, &o), 0);
  for (size_t i = 0; i < gpujit_module_kernel_count(m); i++) {
    a |= strcmp(gpujit_module_kernel(m, i), "polynomial") == 0;
    b |= strcmp(gpujit_module_kernel(m, i), "polynomial_inplace") == 0;
  }
  assert_true(a && b);
  img = gpujit_module_image(m, &size);
  assert_true(th_elf_has_section(img, size, ".debug_line")); /* nvJitLink got -lineinfo */
  assert_non_null(memmem(img, size, "helper.cu", 9));
  assert_non_null(memmem(img, size, "main.cu", 7));
  assert_int_equal(gpujit_module_write(m, out), 0);
  /* The linked cubin is plain ELF: readelf lists both kernels from both files. */
  assert_int_equal(th_run(&listing, "readelf -sW '%s'", out), 0);
  assert_non_null(strstr(listing, " polynomial\n"));
  assert_non_null(strstr(listing, " polynomial_inplace\n"));
  free(listing);
  gpujit_module_free(m);
  th_rmrf(dir);
  free(dir);
  free(out);
}

/* A compile error in the second file of a multi-file module names that file and line. */
static void test_build__line_mapping_multi_file(void **state)
{
  char *dir = th_tmpdir(), *want;
  char *p1 = th_write(dir, "a.cu", "extern \"C\" __global__ void ka(float *x) { x[0] = 1; }\n");
  char *p2 = th_write(dir, "b.cu", "// b\n\n__device__ float f(float v)\n{\n  return v + undefined_name;\n}\n");
  const char *paths[] = {p1, p2};
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  (void)state;
  o.arch = "sm_90";
  assert_int_equal(gpujit_module_build_files(&m, paths, 2, &o), GPUJIT_ECOMPILE);
  assert_null(m);
  want = th_path(dir, "b.cu:5:14: identifier \"undefined_name\" is undefined");
  if (!strstr(gpujit_error_last(), want))
    fail_msg("got '%s', want '%s'", gpujit_error_last(), want);
  assert_non_null(strstr(gpujit_error_log(), "b.cu(5): error"));
  free(want);
  free(p1);
  free(p2);
  th_rmrf(dir);
  free(dir);
}

/* Text joined before user code is followed by #line, so user lines keep their numbers. */
static void test_build__prelude_line_mapping(void **state)
{
  const char *src = "// user file\n__global__ void k(float *y)\n{\n  y[0] = SCALE * nope;\n}\n";
  gpujit_source s = {"/virtual/user.cu", src, strlen(src)};
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  (void)state;
  o.arch = "sm_90";
  o.prelude = "#define SCALE 2.0f\n#define OTHER 1\n";
  assert_int_equal(gpujit_module_build_sources(&m, &s, 1, &o), GPUJIT_ECOMPILE);
  if (!strstr(gpujit_error_last(), "/virtual/user.cu:4:18: identifier \"nope\" is undefined"))
    fail_msg("got '%s'", gpujit_error_last());
  /* Without the directive the prelude's three lines shift the user's. */
  o.line_directives = 0;
  assert_int_equal(gpujit_module_build_sources(&m, &s, 1, &o), GPUJIT_ECOMPILE);
  assert_non_null(strstr(gpujit_error_last(), "/virtual/user.cu:7:"));
}

static void test_build__bad_inputs(void **state)
{
  char *dir = th_tmpdir();
  char *empty = th_write(dir, "empty.cu", "");
  char *bin = th_path(dir, "bin.cu"), *missing = th_path(dir, "missing.cu");
  const char *p;
  gpujit_module *m = (gpujit_module *)0x1;
  FILE *f = fopen(bin, "wb");
  (void)state;
  fwrite("\x7f" "ELF\0\0\x01\x02garbage\0\0", 1, 18, f);
  fclose(f);
  p = empty;
  assert_int_equal(gpujit_module_build_files(&m, &p, 1, NULL), GPUJIT_EPARSE);
  assert_null(m);
  assert_non_null(strstr(gpujit_error_last(), "empty file"));
  p = bin;
  assert_int_equal(gpujit_module_build_files(&m, &p, 1, NULL), GPUJIT_EPARSE);
  assert_non_null(strstr(gpujit_error_last(), "binary file"));
  p = missing;
  assert_int_equal(gpujit_module_build_files(&m, &p, 1, NULL), GPUJIT_ENOENT);
  assert_non_null(strstr(gpujit_error_last(), "missing.cu"));
  p = dir;
  assert_int_equal(gpujit_module_build_files(&m, &p, 1, NULL), GPUJIT_EIO);
  assert_non_null(strstr(gpujit_error_last(), "is a directory"));
  assert_int_equal(gpujit_module_build_files(&m, NULL, 0, NULL), GPUJIT_EINVAL);
  assert_int_equal(gpujit_module_build_files(NULL, &p, 1, NULL), GPUJIT_EINVAL);
  free(empty);
  free(bin);
  free(missing);
  th_rmrf(dir);
  free(dir);
}

static void test_build__write_atomic(void **state)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m;
  char *dir = th_tmpdir(), *out = th_path(dir, "o.cubin"), *bad = th_path(dir, "no/such/dir/o.cubin"), *data, *ls;
  size_t len, size;
  const void *img;
  (void)state;
  o.arch = "sm_90";
  m = build_str("saxpy.cu", SAXPY, &o);
  img = gpujit_module_image(m, &size);
  assert_int_equal(gpujit_module_write(m, out), 0);
  data = th_read(out, &len);
  assert_int_equal(len, size);
  assert_memory_equal(data, img, size);
  assert_true(gpujit_module_write(m, bad) < 0);
  assert_non_null(strstr(gpujit_error_last(), "no/such/dir/o.cubin"));
  assert_int_equal(th_run(&ls, "ls -A '%s'", dir), 0);
  assert_string_equal(ls, "o.cubin\n"); /* no temp files left behind */
  free(ls);
  free(data);
  gpujit_module_free(m);
  free(out);
  free(bad);
  th_rmrf(dir);
  free(dir);
}

typedef struct job {
  int index;
  int err;
  char kernel[64];
  char got[64];
} job;

static void *compile_thread(void *arg)
{
  job *j = arg;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  char src[256], name[64];
  gpujit_module *m = NULL;
  gpujit_source s;
  snprintf(j->kernel, sizeof(j->kernel), "k%d", j->index);
  snprintf(src, sizeof(src), "extern \"C\" __global__ void %s(float *x) { x[threadIdx.x] *= %d.0f; }\n",
           j->kernel, j->index + 1);
  snprintf(name, sizeof(name), "thread%d.cu", j->index);
  s.name = name;
  s.data = src;
  s.size = strlen(src);
  o.arch = "sm_90";
  j->err = gpujit_module_build_sources(&m, &s, 1, &o);
  if (j->err == 0 && gpujit_module_kernel_count(m) == 1)
    snprintf(j->got, sizeof(j->got), "%s", gpujit_module_kernel(m, 0));
  gpujit_module_free(m);
  return NULL;
}

static void test_build__threads(void **state)
{
  pthread_t th[4];
  job jobs[4] = {{0}};
  (void)state;
  for (int i = 0; i < 4; i++) {
    jobs[i].index = i;
    assert_int_equal(pthread_create(&th[i], NULL, compile_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(jobs[i].err, 0);
    assert_string_equal(jobs[i].got, jobs[i].kernel);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_build__saxpy_cubin),
      cmocka_unit_test(test_build__no_lineinfo),
      cmocka_unit_test(test_build__ptx_and_ltoir),
      cmocka_unit_test(test_build__name_expressions),
      cmocka_unit_test(test_build__record),
      cmocka_unit_test(test_build__lto_link),
      cmocka_unit_test(test_build__line_mapping_multi_file),
      cmocka_unit_test(test_build__prelude_line_mapping),
      cmocka_unit_test(test_build__bad_inputs),
      cmocka_unit_test(test_build__write_atomic),
      cmocka_unit_test(test_build__threads),
  };
  if (getenv("TEST_FILTER"))
    cmocka_set_test_filter(getenv("TEST_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
