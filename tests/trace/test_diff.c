/* `trace diff` and recorded compile profiles: real compiles traced, compared and gated; the
 * statistics on traces with known times; foreign and malformed traces. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>

#include "helpers.h"

#include "gpujit.h"

#define LIGHT                                                                                                   \
  "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y)\n"                               \
  "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"
/* The same kernel with a heavy include it does not even need. */
#define HEAVY "#include <cub/block/block_reduce.cuh>\n" LIGHT
#define CUB_HEADER "cub/block/block_reduce.cuh"

typedef struct fixture {
  char *dir, *cache_dir;
} fixture;

static int setup(void **state)
{
  fixture *f = calloc(1, sizeof(*f));
  f->dir = th_tmpdir();
  f->cache_dir = th_path(f->dir, "cache");
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fixture *f = *state;
  th_rmrf(f->dir);
  free(f->dir);
  free(f->cache_dir);
  free(f);
  return 0;
}

/* Build `name`.cu holding `src` with a trace written to `trace_name`; through the cache when
 * `cache` is set, traced or not. Returns the trace's path. */
static char *build(const fixture *f, const char *name, const char *src, const char *trace_name, bool cache)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *c = NULL;
  gpujit_trace *t = NULL;
  gpujit_module *m = NULL;
  char file[256], *path, *out = trace_name ? th_path(f->dir, trace_name) : NULL;
  const char *p;
  snprintf(file, sizeof(file), "%s.cu", name);
  path = th_write(f->dir, file, src);
  p = path;
  to.tmp_dir = f->dir;
  if (out)
    assert_int_equal(gpujit_trace_create(&t, &to), 0);
  if (cache) {
    co.dir = f->cache_dir;
    assert_int_equal(gpujit_cache_open(&c, &co), 0);
  }
  o.arch = "sm_90";
  o.trace = t;
  o.cache = c;
  if (gpujit_module_build_files(&m, &p, 1, &o) != 0)
    fail_msg("%s", gpujit_error_last());
  if (out)
    assert_int_equal(gpujit_trace_write(t, out), 0);
  gpujit_module_free(m);
  gpujit_trace_free(t);
  gpujit_cache_free(c);
  free(path);
  return out;
}

static gpujit_trace_analysis *analyze(const char *path)
{
  gpujit_trace_analysis *a = NULL;
  assert_int_equal(gpujit_trace_analysis_create(&a), 0);
  if (gpujit_trace_analysis_add_path(a, path, NULL) != 0)
    fail_msg("%s", gpujit_error_last());
  return a;
}

static const gpujit_trace_diff_row *find(const gpujit_trace_diff *d, gpujit_trace_table t, const char *needle)
{
  for (size_t i = 0; i < gpujit_trace_diff_count(d, t); i++) {
    const gpujit_trace_diff_row *r = gpujit_trace_diff_row_at(d, t, i);
    if (strstr(r->name, needle))
      return r;
  }
  return NULL;
}

static gpujit_trace_diff *diff(gpujit_trace_analysis *base, gpujit_trace_analysis *next, double pct, double min_ms)
{
  gpujit_trace_diff_options o = GPUJIT_TRACE_DIFF_OPTIONS_INIT;
  gpujit_trace_diff *d = NULL;
  o.fail_above_pct = pct;
  o.min_ms = min_ms;
  if (gpujit_trace_diff_create(&d, base, next, &o) != 0)
    fail_msg("%s", gpujit_error_last());
  return d;
}

static void test_diff__heavy_include_fails_the_gate(void **state)
{
  fixture *f = *state;
  char *base = build(f, "saxpy", LIGHT, "base.json", false), *next = build(f, "saxpy", HEAVY, "new.json", false);
  gpujit_trace_analysis *a = analyze(base), *b = analyze(next);
  gpujit_trace_diff *d = diff(a, b, 25, 100);
  const gpujit_trace_diff_row *m = find(d, GPUJIT_TRACE_MODULES, "saxpy");
  const gpujit_trace_diff_row *h = find(d, GPUJIT_TRACE_HEADERS, CUB_HEADER);
  const gpujit_trace_diff_row *fe = find(d, GPUJIT_TRACE_PHASES, "front end");
  gpujit_trace_diff_verdict v;
  assert_int_equal(gpujit_trace_diff_outcome(d, &v), 0);
  assert_non_null(m);
  assert_int_equal(m->change, GPUJIT_TRACE_SLOWER);
  assert_true(m->regression);
  assert_true(m->delta_us > 100e3); /* CUB's headers cost far more than 100 ms */
  assert_true(v.gated && v.failed);
  assert_int_equal(v.regressions, 1);
  assert_int_equal(v.min_samples, 1);
  /* The cause is named: the header is new, and the front end took the time. */
  assert_non_null(h);
  assert_int_equal(h->change, GPUJIT_TRACE_ADDED);
  assert_true(h->base_us == 0 && h->new_us > 0);
  assert_int_equal(fe->change, GPUJIT_TRACE_SLOWER);
  assert_int_equal(gpujit_trace_diff_count(d, GPUJIT_TRACE_MODULES), 1);
  /* Without a gate nothing fails. */
  gpujit_trace_diff_free(d);
  d = diff(a, b, -1, 0);
  assert_int_equal(gpujit_trace_diff_outcome(d, &v), 0);
  assert_false(v.gated || v.failed);
  assert_int_equal(v.slower, 1);
  gpujit_trace_diff_free(d);
  gpujit_trace_analysis_free(a);
  gpujit_trace_analysis_free(b);
  free(base);
  free(next);
}

static void test_diff__identical_builds_pass(void **state)
{
  fixture *f = *state;
  char *base = build(f, "saxpy", LIGHT, "base.json", false), *next = build(f, "saxpy", LIGHT, "new.json", false);
  gpujit_trace_analysis *a = analyze(base), *b = analyze(next);
  gpujit_trace_diff *d = diff(a, b, 100, 1000); /* one build each way, timed on a shared machine: only a real change passes 1 s */
  gpujit_trace_diff_verdict v;
  assert_int_equal(gpujit_trace_diff_outcome(d, &v), 0);
  assert_true(v.gated);
  assert_false(v.failed);
  assert_int_equal(v.regressions, 0);
  assert_int_equal(v.added + v.removed + v.unmeasured, 0);
  assert_false(find(d, GPUJIT_TRACE_MODULES, "saxpy")->regression);
  gpujit_trace_diff_free(d);
  gpujit_trace_analysis_free(a);
  gpujit_trace_analysis_free(b);
  free(base);
  free(next);
}

static void test_diff__renamed_module(void **state)
{
  fixture *f = *state;
  char *base = build(f, "saxpy", LIGHT, "base.json", false), *next = build(f, "axpy", LIGHT, "new.json", false);
  gpujit_trace_analysis *a = analyze(base), *b = analyze(next);
  gpujit_trace_diff *d = diff(a, b, 10, 0);
  const gpujit_trace_diff_row *old = find(d, GPUJIT_TRACE_MODULES, "saxpy"), *neu = NULL;
  gpujit_trace_diff_verdict v;
  for (size_t i = 0; i < gpujit_trace_diff_count(d, GPUJIT_TRACE_MODULES); i++)
    if (!strcmp(gpujit_trace_diff_row_at(d, GPUJIT_TRACE_MODULES, i)->name, "axpy"))
      neu = gpujit_trace_diff_row_at(d, GPUJIT_TRACE_MODULES, i);
  assert_int_equal(gpujit_trace_diff_count(d, GPUJIT_TRACE_MODULES), 2);
  assert_int_equal(old->change, GPUJIT_TRACE_REMOVED);
  assert_true(old->new_us == 0 && old->base_us > 0);
  assert_non_null(neu);
  assert_int_equal(neu->change, GPUJIT_TRACE_ADDED);
  assert_true(neu->base_us == 0 && neu->new_us > 0);
  assert_int_equal(gpujit_trace_diff_outcome(d, &v), 0);
  assert_int_equal(v.added, 1);
  assert_int_equal(v.removed, 1);
  assert_int_equal(v.regressions, 0); /* a new module is not a slower one */
  gpujit_trace_diff_free(d);
  gpujit_trace_analysis_free(a);
  gpujit_trace_analysis_free(b);
  free(base);
  free(next);
}

static const gpujit_trace_stat *stat_of(gpujit_trace_analysis *a, gpujit_trace_table t, const char *name)
{
  for (size_t i = 0; i < gpujit_trace_analysis_count(a, t); i++)
    if (!strcmp(gpujit_trace_analysis_row(a, t, i)->name, name))
      return gpujit_trace_analysis_row(a, t, i);
  return NULL;
}

static cJSON *find_event(cJSON *root, const char *name)
{
  cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
    cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (cJSON_IsString(n) && !strcmp(n->valuestring, name))
      return e;
  }
  return NULL;
}

static void test_diff__traced_hit_carries_the_recorded_profile(void **state)
{
  fixture *f = *state;
  char *miss = build(f, "block", HEAVY, "miss.json", true), *hit = build(f, "block", HEAVY, "hit.json", true);
  gpujit_trace_analysis *a = analyze(miss), *b = analyze(hit);
  const char *phases[] = {"front end", "NVVM optimizer", "codegen", "ptxas"};
  size_t unmeasured = 9;
  char *text = th_read(hit, NULL);
  cJSON *root = cJSON_Parse(text), *rec, *args;
  gpujit_trace_diff *d;
  const gpujit_trace_diff_row *m;

  assert_int_equal(gpujit_trace_analysis_recorded(a, &unmeasured), 0);
  assert_int_equal(unmeasured, 0);
  assert_int_equal(gpujit_trace_analysis_recorded(b, &unmeasured), 1);
  assert_int_equal(unmeasured, 0);
  /* The hit's trace has NVRTC's phases as the miss measured them. */
  for (size_t i = 0; i < 4; i++) {
    const gpujit_trace_stat *x = stat_of(a, GPUJIT_TRACE_PHASES, phases[i]), *y = stat_of(b, GPUJIT_TRACE_PHASES, phases[i]);
    assert_non_null(x);
    assert_non_null(y);
    assert_true(fabs(x->total_us - y->total_us) <= 1e-3 * x->total_us + 1);
  }
  { /* the toolkit's headers named under its real root: one name whichever spelling reached it */
    char root[PATH_MAX], header[PATH_MAX + 64];
    assert_non_null(realpath("/usr/local/cuda", root));
    snprintf(header, sizeof(header), "%s/include/cccl/%s", root, CUB_HEADER);
    assert_non_null(stat_of(b, GPUJIT_TRACE_HEADERS, header));
  }
  /* ... marked as recorded: when, on which toolkit, from which entry. */
  rec = find_event(root, "recorded compile block");
  assert_non_null(rec);
  args = cJSON_GetObjectItemCaseSensitive(rec, "args");
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(rec, "cat")->valuestring, "gpujit.recorded");
  assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(args, "toolkit")->valuestring, "NVRTC 13."));
  assert_int_equal(strlen(cJSON_GetObjectItemCaseSensitive(args, "recorded_at")->valuestring), 20);
  assert_int_equal(strlen(cJSON_GetObjectItemCaseSensitive(args, "key")->valuestring), 32);
  assert_non_null(find_event(root, "front end")); /* the phases drawn beneath it */
  /* Compared with the miss that recorded it: the same module, no change. */
  d = diff(a, b, 1, 0);
  m = find(d, GPUJIT_TRACE_MODULES, "block");
  assert_int_equal(m->change, GPUJIT_TRACE_SAME);
  assert_false(m->regression);
  assert_true(fabs(m->delta_us) < 1e-3 * m->base_us);
  gpujit_trace_diff_free(d);
  /* The same record replayed by two traces is one sample, not two. */
  assert_int_equal(gpujit_trace_analysis_add_file(b, hit), 0);
  d = diff(a, b, 1, 0);
  assert_int_equal(find(d, GPUJIT_TRACE_MODULES, "block")->new_samples, 1);
  gpujit_trace_diff_free(d);
  cJSON_Delete(root);
  free(text);
  gpujit_trace_analysis_free(a);
  gpujit_trace_analysis_free(b);
  free(miss);
  free(hit);
}

static void test_diff__hit_without_a_profile_is_unmeasured(void **state)
{
  fixture *f = *state;
  char *miss, *hit;
  gpujit_trace_analysis *a, *b;
  gpujit_trace_diff *d;
  gpujit_trace_diff_verdict v;
  size_t unmeasured = 0;
  build(f, "saxpy", LIGHT, NULL, true); /* built untraced: no profile */
  miss = build(f, "saxpy", LIGHT, "other.json", false);
  hit = build(f, "saxpy", LIGHT, "hit.json", true);
  a = analyze(miss);
  b = analyze(hit);
  assert_int_equal(gpujit_trace_analysis_recorded(b, &unmeasured), 0);
  assert_int_equal(unmeasured, 1);
  {
    char *text = th_read(hit, NULL);
    assert_non_null(strstr(text, "no recorded compile profile: saxpy"));
    assert_non_null(strstr(text, "built without --time-trace"));
    free(text);
  }
  d = diff(a, b, 1, 0);
  assert_int_equal(gpujit_trace_diff_outcome(d, &v), 0);
  assert_int_equal(v.unmeasured, 1);
  assert_false(v.failed); /* an unknown is not a regression */
  assert_int_equal(find(d, GPUJIT_TRACE_MODULES, "saxpy")->change, GPUJIT_TRACE_UNMEASURED);
  gpujit_trace_diff_free(d);
  gpujit_trace_analysis_free(a);
  gpujit_trace_analysis_free(b);
  free(miss);
  free(hit);
}

static void test_diff__damaged_profile_is_a_note_not_a_failure(void **state)
{
  fixture *f = *state;
  char *hit, *cmd;
  gpujit_trace_analysis *b;
  size_t unmeasured = 0;
  free(build(f, "saxpy", LIGHT, "miss.json", true));
  cmd = malloc(strlen(f->cache_dir) + 200);
  sprintf(cmd, "for p in '%s'/entries/*/*/profile.json; do printf X | dd of=\"$p\" bs=1 seek=10 conv=notrunc 2>/dev/null; done",
          f->cache_dir);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  hit = build(f, "saxpy", LIGHT, "hit.json", true); /* still a hit, still builds */
  b = analyze(hit);
  assert_int_equal(gpujit_trace_analysis_recorded(b, &unmeasured), 0);
  assert_int_equal(unmeasured, 1);
  {
    char *text = th_read(hit, NULL);
    assert_non_null(strstr(text, "no recorded compile profile: saxpy"));
    assert_non_null(strstr(text, "\"cache\":\"hit\""));
    free(text);
  }
  gpujit_trace_analysis_free(b);
  free(hit);
}

/* A trace with `count` builds of module `name`, each compiling for the given milliseconds. */
static void add_builds(gpujit_trace_analysis *a, const char *name, const double *ms, size_t count)
{
  for (size_t i = 0; i < count; i++) {
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"traceEvents\":[{\"name\":\"build %s\",\"cat\":\"gpujit\",\"ph\":\"X\",\"ts\":0,\"dur\":%f,\"pid\":1,"
             "\"tid\":1,\"args\":{\"cache\":\"miss\"}},{\"name\":\"compile %s.cu\",\"cat\":\"gpujit\",\"ph\":\"X\","
             "\"ts\":1,\"dur\":%f,\"pid\":1,\"tid\":1},{\"name\":\"CUDA C++ Front-End\",\"cat\":\"nvrtc\",\"ph\":\"X\","
             "\"ts\":1,\"dur\":%f,\"pid\":1,\"tid\":1}]}",
             name, ms[i] * 1e3 + 10, name, ms[i] * 1e3, ms[i] * 1e3);
    assert_int_equal(gpujit_trace_analysis_add_json(a, "synthetic", json, strlen(json)), 0);
  }
}

static void test_diff__samples_medians_and_noise(void **state)
{
  const double base[] = {100, 110, 105}, slower[] = {200, 210, 205}, noisy[] = {104, 125, 98};
  const double one[] = {100}, other[] = {130};
  gpujit_trace_analysis *a = NULL, *b = NULL, *c = NULL, *x = NULL, *y = NULL;
  gpujit_trace_diff *d;
  const gpujit_trace_diff_row *r;
  gpujit_trace_diff_verdict v;
  (void)state;
  assert_int_equal(gpujit_trace_analysis_create(&a), 0);
  assert_int_equal(gpujit_trace_analysis_create(&b), 0);
  assert_int_equal(gpujit_trace_analysis_create(&c), 0);
  add_builds(a, "m", base, 3);
  add_builds(b, "m", slower, 3);
  add_builds(c, "m", noisy, 3);
  /* Medians 105 → 205, ranges 10 and 10: beyond the noise, the samples apart (p = 1/20). */
  d = diff(a, b, 10, 50);
  r = find(d, GPUJIT_TRACE_MODULES, "m");
  assert_float_equal(r->base_us, 105e3, 1e-6);
  assert_float_equal(r->new_us, 205e3, 1e-6);
  assert_float_equal(r->base_spread_us, 10e3, 1e-6);
  assert_float_equal(r->delta_pct, 100.0 * 100 / 105, 1e-9);
  assert_int_equal(r->base_samples, 3);
  assert_float_equal(r->p_value, 0.05, 1e-12);
  assert_true(r->regression);
  assert_int_equal(gpujit_trace_diff_outcome(d, &v), 0);
  assert_true(v.failed && v.total_regressed);
  assert_int_equal(v.min_samples, 3);
  assert_float_equal(v.worst_p, 0.05, 1e-12);
  assert_float_equal(find(d, GPUJIT_TRACE_PHASES, "front end")->new_us, 205e3, 1e-6);
  gpujit_trace_diff_free(d);
  /* Median 105 → 104 but the new samples range over 27 ms: no change, whatever the gate. */
  d = diff(a, c, 0, 0);
  r = find(d, GPUJIT_TRACE_MODULES, "m");
  assert_int_equal(r->change, GPUJIT_TRACE_SAME);
  assert_false(r->regression);
  assert_true(r->p_value > 0.05);
  assert_int_equal(gpujit_trace_diff_outcome(d, &v), 0);
  assert_false(v.failed);
  gpujit_trace_diff_free(d);
  /* One sample a side: +30 % is a regression past a 20 % gate, and not past a 40 % one. */
  assert_int_equal(gpujit_trace_analysis_create(&x), 0);
  assert_int_equal(gpujit_trace_analysis_create(&y), 0);
  add_builds(x, "m", one, 1);
  add_builds(y, "m", other, 1);
  d = diff(x, y, 20, 10);
  assert_true(find(d, GPUJIT_TRACE_MODULES, "m")->regression);
  assert_float_equal(find(d, GPUJIT_TRACE_MODULES, "m")->p_value, -1, 0);
  gpujit_trace_diff_free(d);
  d = diff(x, y, 40, 10);
  assert_false(find(d, GPUJIT_TRACE_MODULES, "m")->regression);
  gpujit_trace_diff_free(d);
  /* ... nor past --min-ms 50: 30 ms is below it. */
  d = diff(x, y, 20, 50);
  assert_false(find(d, GPUJIT_TRACE_MODULES, "m")->regression);
  gpujit_trace_diff_free(d);
  gpujit_trace_analysis_free(a);
  gpujit_trace_analysis_free(b);
  gpujit_trace_analysis_free(c);
  gpujit_trace_analysis_free(x);
  gpujit_trace_analysis_free(y);
}

static void test_diff__foreign_and_malformed(void **state)
{
  gpujit_trace_analysis *a = NULL, *b = NULL;
  gpujit_trace_diff *d = NULL;
  const double one[] = {100};
  (void)state;
  assert_int_equal(gpujit_trace_analysis_create(&a), 0);
  assert_int_equal(gpujit_trace_analysis_create(&b), 0);
  /* A valid Trace Event Format file of something else: read, but it holds no compile. */
  assert_int_equal(gpujit_trace_analysis_add_file(a, GPUJIT_TEST_DATA "/foreign_trace.json"), 0);
  add_builds(b, "m", one, 1);
  assert_int_equal(gpujit_trace_diff_create(&d, a, b, NULL), GPUJIT_EINVAL);
  assert_null(d);
  assert_non_null(strstr(gpujit_error_last(), "base traces hold no module build"));
  /* Malformed: named, and nothing added. */
  assert_int_equal(gpujit_trace_analysis_add_file(b, GPUJIT_TEST_DATA "/malformed.json"), GPUJIT_EPARSE);
  assert_non_null(strstr(gpujit_error_last(), "malformed.json: not valid JSON"));
  assert_int_equal(gpujit_trace_analysis_add_path(b, GPUJIT_TEST_DATA "/bad_event.json", NULL), GPUJIT_EPARSE);
  /* A recorded profile that is not one. */
  {
    const char *bad = "{\"traceEvents\":[{\"name\":\"recorded compile m\",\"cat\":\"gpujit.recorded\",\"ph\":\"X\","
                      "\"ts\":0,\"dur\":5,\"pid\":1,\"tid\":2,\"args\":{\"module\":\"m\",\"profile\":{\"format\":\"x\"}}}]}";
    assert_int_equal(gpujit_trace_analysis_add_json(b, "bad-record", bad, strlen(bad)), GPUJIT_EPARSE);
    assert_non_null(strstr(gpujit_error_last(), "not a gpujit compile profile"));
  }
  {
    size_t files = 9;
    char *dir = th_tmpdir();
    assert_int_equal(gpujit_trace_analysis_add_path(b, dir, &files), GPUJIT_ENOENT);
    assert_non_null(strstr(gpujit_error_last(), "no *.json traces"));
    th_rmrf(dir);
    free(dir);
  }
  gpujit_trace_analysis_free(a);
  gpujit_trace_analysis_free(b);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_diff__heavy_include_fails_the_gate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_diff__identical_builds_pass, setup, teardown),
      cmocka_unit_test_setup_teardown(test_diff__renamed_module, setup, teardown),
      cmocka_unit_test_setup_teardown(test_diff__traced_hit_carries_the_recorded_profile, setup, teardown),
      cmocka_unit_test_setup_teardown(test_diff__hit_without_a_profile_is_unmeasured, setup, teardown),
      cmocka_unit_test_setup_teardown(test_diff__damaged_profile_is_a_note_not_a_failure, setup, teardown),
      cmocka_unit_test(test_diff__samples_medians_and_noise),
      cmocka_unit_test(test_diff__foreign_and_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
