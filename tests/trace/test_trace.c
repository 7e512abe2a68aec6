/* The trace sink: structure, NVRTC phase merging and rebasing, temp files, threads. */
#include <pthread.h>

#include "trace_check.h"

#include "gpujit.h"
#include "trace/nvrtc.h"
#include "trace/sink.h"

#define SAXPY \
  "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y)\n" \
  "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"

static gpujit_trace *new_trace(const char *tmp)
{
  gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
  gpujit_trace *t = NULL;
  to.tmp_dir = tmp;
  assert_int_equal(gpujit_trace_create(&t, &to), 0);
  return t;
}

static cJSON *dump(gpujit_trace *t, size_t *tracks)
{
  char *json;
  size_t len;
  cJSON *root;
  assert_int_equal(gpujit_trace_to_json(&json, &len, t), 0);
  assert_int_equal(strlen(json), len);
  root = tc_check(json, tracks);
  gpujit_free(json);
  return root;
}

static void test_trace__build_structure(void **state)
{
  char *tmp = th_tmpdir(), *ls;
  gpujit_trace *t = new_trace(tmp);
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_source s = {"saxpy.cu", SAXPY, strlen(SAXPY)};
  gpujit_module *m = NULL;
  cJSON *root, *compile, *fe, *build, *e;
  size_t tracks = 0, nvrtc = 0;
  (void)state;
  o.arch = "sm_90";
  o.trace = t;
  assert_int_equal(gpujit_module_build_sources(&m, &s, 1, &o), 0);
  root = dump(t, &tracks);
  assert_int_equal(tracks, 1);
  build = tc_find(root, "build saxpy");
  compile = tc_find(root, "compile saxpy.cu");
  fe = tc_find(root, "CUDA C++ Front-End");
  assert_non_null(build);
  assert_non_null(compile);
  assert_non_null(fe);
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(fe, "cat")->valuestring, "nvrtc");
  /* NVRTC's phases are rebased into the compile span, on the same (compiling thread's) track. */
  assert_true(tc_num(fe, "ts") >= tc_num(compile, "ts"));
  assert_true(tc_num(fe, "ts") + tc_num(fe, "dur") <= tc_num(compile, "ts") + tc_num(compile, "dur") + 1e-3);
  assert_true(tc_num(fe, "tid") == tc_num(compile, "tid"));
  assert_true(tc_num(compile, "ts") >= tc_num(build, "ts"));
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(compile, "args"), "arch")->valuestring,
                      "sm_90");
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
    cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
    nvrtc += cJSON_IsString(cat) && !strcmp(cat->valuestring, "nvrtc");
  }
  assert_true(nvrtc > 10);
  /* lean (the default): NVRTC stops at PTX; the pass and the toolkit's ptxas follow */
  assert_null(tc_find(root, "Total PTXAS Time"));
  assert_non_null(tc_find(root, "lean PTX"));
  assert_non_null(tc_find(root, "ptxas"));
  cJSON_Delete(root);
  /* NVRTC's own trace file was read and deleted. */
  assert_int_equal(th_run(&ls, "ls -A '%s'", tmp), 0);
  assert_string_equal(ls, "");
  free(ls);
  gpujit_module_free(m);
  gpujit_trace_free(t);
  th_rmrf(tmp);
  free(tmp);
}

static void test_trace__failed_compile_cleans_up(void **state)
{
  char *tmp = th_tmpdir(), *ls;
  gpujit_trace *t = new_trace(tmp);
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *bad = "__global__ void k() { undefined_thing(); }\n";
  gpujit_source s = {"bad.cu", bad, strlen(bad)};
  gpujit_module *m = NULL;
  cJSON *root, *compile;
  (void)state;
  o.arch = "sm_90";
  o.trace = t;
  for (int i = 0; i < 2; i++) /* a second compile must not trip over the first's file */
    assert_int_equal(gpujit_module_build_sources(&m, &s, 1, &o), GPUJIT_ECOMPILE);
  assert_int_equal(th_run(&ls, "ls -A '%s'", tmp), 0);
  assert_string_equal(ls, "");
  free(ls);
  root = dump(t, NULL);
  compile = tc_find(root, "compile bad.cu");
  assert_non_null(compile);
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(compile, "args"), "status")->valuestring,
                      "error");
  cJSON_Delete(root);
  gpujit_trace_free(t);
  th_rmrf(tmp);
  free(tmp);
}

static void test_trace__rebase_and_drop_empty(void **state)
{
  char *tmp = th_tmpdir(), *base = th_path(tmp, "nv"), *file;
  gpujit_trace *t = new_trace(tmp);
  cJSON *root, *a, *b;
  int64_t tid = gpujit__thread_tid();
  (void)state;
  file = th_write(tmp, "nv.json",
                  "{\"otherData\":{},\"traceEvents\":[{},"
                  "{\"name\":\"Outer\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":10,\"dur\":100},"
                  "{\"name\":\"Inner\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":20,\"dur\":5,\"args\":{\"detail\":\"d\"}},"
                  "{\"name\":\"Late\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":900,\"dur\":500}]}");
  gpujit__trace_merge_nvrtc(t, base, 1000.0, 2000.0, NULL);
  assert_false(th_exists(file));
  assert_int_equal(gpujit_trace_event_count(t), 3); /* the empty event was dropped */
  root = dump(t, NULL);
  a = tc_find(root, "Outer");
  b = tc_find(root, "Inner");
  assert_float_equal(tc_num(a, "ts"), 1010.0, 1e-9);
  assert_float_equal(tc_num(a, "dur"), 100.0, 1e-9);
  assert_float_equal(tc_num(b, "ts"), 1020.0, 1e-9);
  assert_true(tc_num(a, "tid") == (double)tid);
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "args"), "detail")->valuestring, "d");
  /* Clamped to the end of the compile span. */
  b = tc_find(root, "Late");
  assert_float_equal(tc_num(b, "ts") + tc_num(b, "dur"), 2000.0, 1e-9);
  cJSON_Delete(root);
  /* NVRTC's file without LibNVVM's sub-phases: LibNVVM counts as the optimizer. */
  {
    double ph[4] = {0, 0, 0, 0};
    char *nv = th_write(tmp, "nv.json",
                        "{\"traceEvents\":[{},{\"dur\":300,\"name\":\"CUDA C++ Front-End\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":0},"
                        "{\"args\":{\"detail\":\"x.cu\"},\"dur\":2000,\"name\":\"LibNVVM\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":400}]}");
    gpujit__trace_merge_nvrtc(t, base, 0, 1e9, ph);
    assert_float_equal(ph[0], 0.3, 1e-12);
    assert_float_equal(ph[1], 2.0, 1e-12);
    assert_float_equal(ph[2], 0, 0);
    assert_false(th_exists(nv));
    free(nv);
    assert_int_equal(gpujit_trace_event_count(t), 5);
  }
  /* A malformed file is skipped (and removed), never fatal. */
  free(file);
  file = th_write(tmp, "nv.json", "ptxas garbage");
  gpujit__trace_merge_nvrtc(t, base, 0, 1, NULL);
  assert_false(th_exists(file));
  assert_int_equal(gpujit_trace_event_count(t), 5);
  free(file);
  free(base);
  gpujit_trace_free(t);
  th_rmrf(tmp);
  free(tmp);
}

static void test_trace__api_events(void **state)
{
  gpujit_trace *t = new_trace(NULL);
  uint64_t outer, inner;
  int64_t stream;
  cJSON *root, *e;
  size_t tracks;
  char *dir = th_tmpdir(), *path = th_path(dir, "t.json");
  gpujit_trace *loaded = new_trace(NULL);
  (void)state;
  assert_int_equal(gpujit_trace_span_begin(t, &outer, "user", "outer"), 0);
  assert_int_equal(gpujit_trace_span_begin(t, &inner, "user", "inner"), 0);
  assert_int_equal(gpujit_trace_span_arg_num(t, inner, "n", 42), 0);
  assert_int_equal(gpujit_trace_span_arg_str(t, inner, "s", "x"), 0);
  assert_int_equal(gpujit_trace_span_end(t, inner), 0);
  assert_int_equal(gpujit_trace_span_end(t, inner), GPUJIT_EINVAL);
  assert_int_equal(gpujit_trace_instant(t, "user", "mark"), 0);
  assert_int_equal(gpujit_trace_counter(t, "bytes", "value", 7), 0);
  assert_int_equal(gpujit_trace_span_end(t, outer), 0);
  assert_int_equal(gpujit_trace_track(t, &stream, "stream 1"), 0);
  assert_true(stream != 0);
  /* Partially overlapping events from elsewhere are clipped so the track still nests. */
  assert_int_equal(gpujit_trace_complete(t, NULL, stream, "gpu", "k1", 100, 50), 0);
  assert_int_equal(gpujit_trace_complete(t, NULL, stream, "gpu", "k2", 120, 50), 0);
  assert_int_equal(gpujit_trace_complete(t, NULL, stream, "gpu", "k3", 120, -1), GPUJIT_EINVAL);
  /* Perfetto reads a tid as 32 bits: a wider one is refused, never written */
  assert_int_equal(gpujit_trace_complete(t, NULL, (int64_t)1 << 40, "gpu", "k4", 200, 1), GPUJIT_EINVAL);
  assert_true(stream < ((int64_t)1 << 32) && stream >= ((int64_t)1 << 22));
  assert_int_equal(gpujit_trace_set_meta(t, "command", "test"), 0);
  root = dump(t, &tracks);
  assert_int_equal(tracks, 2);
  e = tc_find(root, "inner");
  assert_float_equal(tc_num(cJSON_GetObjectItemCaseSensitive(e, "args"), "n"), 42, 0);
  e = tc_find(root, "k2");
  assert_float_equal(tc_num(e, "ts") + tc_num(e, "dur"), 150.0, 1e-9);
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "otherData"), "command")->valuestring,
                      "test");
  cJSON_Delete(root);
  /* Round trip through a file: a later stage appends to an earlier one's trace. */
  assert_int_equal(gpujit_trace_write(t, path), 0);
  assert_int_equal(gpujit_trace_load(loaded, path), 0);
  assert_int_equal(gpujit_trace_instant(loaded, "user", "after"), 0);
  root = dump(loaded, NULL);
  assert_non_null(tc_find(root, "inner"));
  assert_non_null(tc_find(root, "after"));
  cJSON_Delete(root);
  assert_int_equal(gpujit_trace_load(loaded, GPUJIT_TEST_DATA "/not_a_trace.json"), GPUJIT_EPARSE);
  /* A NULL trace costs nothing and fails nothing. */
  assert_int_equal(gpujit_trace_span_begin(NULL, &outer, "x", "y"), 0);
  assert_int_equal(outer, 0);
  assert_int_equal(gpujit_trace_span_end(NULL, outer), 0);
  gpujit_trace_free(NULL);
  gpujit_trace_free(t);
  gpujit_trace_free(loaded);
  th_rmrf(dir);
  free(dir);
  free(path);
}

static void test_trace__missing_tmp_dir(void **state)
{
  gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
  gpujit_trace *t = NULL;
  (void)state;
  to.tmp_dir = "/no/such/dir";
  assert_int_equal(gpujit_trace_create(&t, &to), GPUJIT_EINVAL);
  assert_null(t);
  to.version = 9;
  assert_int_equal(gpujit_trace_create(&t, &to), GPUJIT_EVERSION);
}

typedef struct tjob {
  gpujit_trace *trace;
  int index, err;
} tjob;

static void *trace_thread(void *arg)
{
  tjob *j = arg;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  char src[200], name[32];
  gpujit_source s;
  gpujit_module *m = NULL;
  snprintf(src, sizeof(src), "extern \"C\" __global__ void k%d(float *x) { x[threadIdx.x] += %d; }\n", j->index, j->index);
  snprintf(name, sizeof(name), "t%d.cu", j->index);
  s.name = name;
  s.data = src;
  s.size = strlen(src);
  o.arch = "sm_90";
  o.trace = j->trace;
  for (int r = 0; r < 2 && j->err == 0; r++)
    j->err = gpujit_module_build_sources(&m, &s, 1, &o), gpujit_module_free(m), m = NULL;
  return NULL;
}

static void test_trace__threads(void **state)
{
  char *tmp = th_tmpdir();
  gpujit_trace *t = new_trace(tmp);
  pthread_t th[3];
  tjob jobs[3];
  cJSON *root;
  size_t tracks = 0;
  (void)state;
  for (int i = 0; i < 3; i++) {
    jobs[i] = (tjob){t, i, 0};
    assert_int_equal(pthread_create(&th[i], NULL, trace_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 3; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(jobs[i].err, 0);
  }
  root = dump(t, &tracks); /* well nested on every track */
  assert_int_equal(tracks, 3);
  cJSON_Delete(root);
  gpujit_trace_free(t);
  th_rmrf(tmp);
  free(tmp);
}

/* A trace an earlier gpujit wrote (tracks from 2^40), appended to: its tracks come back as
 * tracks Perfetto can tell apart, each with its name, its spans on it. */
static void test_trace__loaded_ids_fit(void **state)
{
  char *dir = th_tmpdir(), *path;
  gpujit_trace *t = new_trace(NULL);
  cJSON *root, *e;
  size_t tracks, on_w1 = 0, on_w2 = 0;
  double w1 = 0, w2 = 0;
  (void)state;
  path = th_write(dir, "old.json",
                  "{\"traceEvents\":["
                  "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"tid\":0,\"args\":{\"name\":\"gpujit\"}},"
                  "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":7,\"args\":{\"name\":\"main\"}},"
                  "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":1099511627776,\"args\":{\"name\":\"worker 1\"}},"
                  "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":1099511627777,\"args\":{\"name\":\"worker 2\"}},"
                  "{\"name\":\"a\",\"ph\":\"X\",\"pid\":7,\"tid\":1099511627776,\"ts\":1,\"dur\":5},"
                  "{\"name\":\"b\",\"ph\":\"X\",\"pid\":7,\"tid\":1099511627777,\"ts\":2,\"dur\":5},"
                  "{\"name\":\"c\",\"ph\":\"X\",\"pid\":7,\"tid\":1099511627776,\"ts\":7,\"dur\":1},"
                  "{\"name\":\"d\",\"ph\":\"X\",\"pid\":7,\"tid\":7,\"ts\":0,\"dur\":9}]}");
  assert_int_equal(gpujit_trace_load(t, path), 0);
  root = dump(t, &tracks); /* every id in 32 bits, every track named once */
  assert_int_equal(tracks, 3);
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
    const char *arg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "args"), "name"));
    if (!strcmp(name, "thread_name") && !strcmp(arg, "worker 1"))
      w1 = tc_num(e, "tid");
    if (!strcmp(name, "thread_name") && !strcmp(arg, "worker 2"))
      w2 = tc_num(e, "tid");
  }
  assert_true(w1 != 0 && w2 != 0 && w1 != w2);
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
    if (!strcmp(name, "a") || !strcmp(name, "c"))
      on_w1 += tc_num(e, "tid") == w1;
    if (!strcmp(name, "b"))
      on_w2 += tc_num(e, "tid") == w2;
    if (!strcmp(name, "d"))
      assert_float_equal(tc_num(e, "tid"), 7, 0); /* an id that fits is kept */
  }
  assert_int_equal(on_w1, 2);
  assert_int_equal(on_w2, 1);
  cJSON_Delete(root);
  gpujit_trace_free(t);
  th_rmrf(dir);
  free(dir);
  free(path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trace__build_structure),
      cmocka_unit_test(test_trace__failed_compile_cleans_up),
      cmocka_unit_test(test_trace__rebase_and_drop_empty),
      cmocka_unit_test(test_trace__api_events),
      cmocka_unit_test(test_trace__loaded_ids_fit),
      cmocka_unit_test(test_trace__missing_tmp_dir),
      cmocka_unit_test(test_trace__threads),
  };
  if (getenv("TEST_FILTER"))
    cmocka_set_test_filter(getenv("TEST_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
