/* Project builds with real NVRTC and real worker processes: same bytes as single builds, -j 1 and
 * -j 2 alike, PCH made then used, a failing module among good ones, a worker killed mid-build,
 * cancelling, the project trace, manifests, and a PCH never used after its header changed. */
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "base/fs.h"
#include "compile/nvrtc/nvrtc.h"
#include "compile/toolkit/toolkit.h"
#include "gpujit.h"
#include "helpers.h"
#include "trace/trace_check.h"

#define HEAVY_HEAD "#include <cub/block/block_reduce.cuh>\n#include <cub/block/block_scan.cuh>\n"

typedef struct fx {
  char *root, *src, *cache_dir;
  gpujit_cache *cache;
} fx;

static int setup(void **state)
{
  fx *f = calloc(1, sizeof(*f));
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  f->root = th_tmpdir();
  f->src = th_path(f->root, "src");
  f->cache_dir = th_path(f->root, "cache");
  co.dir = f->cache_dir;
  assert_int_equal(gpujit_cache_open(&f->cache, &co), 0);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;
  gpujit_cache_free(f->cache);
  th_rmrf(f->root);
  free(f->root);
  free(f->src);
  free(f->cache_dir);
  free(f);
  return 0;
}

static void put(const fx *f, const char *rel, const char *text)
{
  char *path = th_path(f->src, rel), *dir = gpujit__dirname(path);
  assert_int_equal(gpujit__mkdirs(dir, 0777), 0);
  free(th_write(f->src, rel, text));
  free(dir);
  free(path);
}

static char *small_kernel(const char *name, int v)
{
  char *s = malloc(256);
  snprintf(s, 256, "extern \"C\" __global__ void %s(float *x) { x[threadIdx.x] *= %d.0f; }\n", name, v);
  return s;
}

static char *heavy_kernel(const char *name, int v)
{
  char *s = malloc(1024);
  snprintf(s, 1024,
           HEAVY_HEAD "extern \"C\" __global__ void %s(float *o) {\n  using R = cub::BlockReduce<float, 128>;\n"
                      "  __shared__ typename R::TempStorage s;\n  float v = R(s).Sum(o[threadIdx.x]) * %d;\n"
                      "  if (!threadIdx.x) o[0] = v;\n}\n",
           name, v);
  return s;
}

static void put_small(const fx *f, const char *rel, const char *name, int v)
{
  char *s = small_kernel(name, v);
  put(f, rel, s);
  free(s);
}

static void put_heavy(const fx *f, const char *rel, const char *name, int v)
{
  char *s = heavy_kernel(name, v);
  put(f, rel, s);
  free(s);
}

static gpujit_module_options opts90(void)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  o.arch = "sm_90";
  return o;
}

static gpujit_project *run_dir(const fx *f, const char *out_dir, int jobs, gpujit_cache *cache, gpujit_trace *trace,
                               int expect)
{
  gpujit_project *p = NULL;
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit_module_options o = opts90();
  assert_int_equal(gpujit_project_create(&p), 0);
  assert_int_equal(gpujit_project_add_dir(p, f->src, out_dir, &o, NULL), 0);
  po.jobs = jobs;
  po.cache = cache;
  po.trace = trace;
  if (gpujit_project_build(p, &po) != expect)
    fail_msg("build: %s", gpujit_error_last());
  return p;
}

static const gpujit_project_result *result_named(const gpujit_project *p, const char *name)
{
  for (size_t i = 0; i < gpujit_project_count(p); i++)
    if (!strcmp(gpujit_project_result_get(p, i)->name, name))
      return gpujit_project_result_get(p, i);
  fail_msg("no module %s", name);
  return NULL;
}

static void assert_same_file(const char *a, const char *b)
{
  size_t na, nb;
  char *da = th_read(a, &na), *db = th_read(b, &nb);
  assert_non_null(da);
  assert_non_null(db);
  assert_int_equal(na, nb);
  assert_memory_equal(da, db, na);
  free(da);
  free(db);
}

/* A single-module build of `rel`, written to `out`. */
static void single(const fx *f, const char *rel, const char *out)
{
  gpujit_module_options o = opts90();
  gpujit_module *m = NULL;
  char *path = th_path(f->src, rel);
  const char *pp = path;
  o.pch = GPUJIT_PCH_OFF;
  assert_int_equal(gpujit_module_build_files(&m, &pp, 1, &o), 0);
  assert_int_equal(gpujit_module_write(m, out), 0);
  gpujit_module_free(m);
  free(path);
}

/* A PCH never changes what a module compiles to: `m`, built with options `o` (a PCH perhaps made
 * or used), is byte for byte what the same build without one makes. The sources are `s` when
 * given, else the file `path`. */
static void same_as_without_pch(const gpujit_module *m, gpujit_module_options o, const gpujit_source *s,
                                const char *path)
{
  gpujit_module *plain = NULL;
  size_t n1, n2;
  const void *i1 = gpujit_module_image(m, &n1), *i2;
  o.pch = GPUJIT_PCH_OFF;
  o.cache = NULL;
  if (s)
    assert_int_equal(gpujit_module_build_sources(&plain, s, 1, &o), 0);
  else
    assert_int_equal(gpujit_module_build_files(&plain, &path, 1, &o), 0);
  i2 = gpujit_module_image(plain, &n2);
  if (n1 != n2 || memcmp(i1, i2, n1))
    fail_msg("with PCH %s the module is not what it is without one (%zu bytes, %zu without)",
             gpujit_pch_status_name(gpujit_module_pch(m, NULL)), n1, n2);
  gpujit_module_free(plain);
}

/* Directory builds: the same bytes as single builds, -j 1 and -j 2 alike, the tree mirrored. */
static void test_project__dir_same_bytes_as_single(void **state)
{
  fx *f = *state;
  char *o1 = th_path(f->root, "o1"), *o2 = th_path(f->root, "o2");
  gpujit_project *p1, *p2;
  const char *rels[] = {"h1", "h2", "sub/s1", "sub/s2"};
  gpujit_project_summary s;
  put_heavy(f, "h1.cu", "h1", 1);
  put_heavy(f, "h2.cu", "h2", 2);
  put_small(f, "sub/s1.cu", "s1", 1);
  put_small(f, "sub/s2.cu", "s2", 2);
  p1 = run_dir(f, o1, 1, NULL, NULL, 0);
  p2 = run_dir(f, o2, 2, NULL, NULL, 0);
  gpujit_project_summary_get(p1, &s);
  assert_int_equal(s.modules, 4);
  assert_int_equal(s.built, 4);
  assert_int_equal(s.workers, 1);
  gpujit_project_summary_get(p2, &s);
  assert_int_equal(s.workers, 2);
  /* one worker, two heavy modules of one include block: the second used the first's PCH */
  assert_int_equal(result_named(p1, "h1")->pch + result_named(p1, "h2")->pch,
                   GPUJIT_PCH_STATUS_CREATED + GPUJIT_PCH_STATUS_USED);
  for (size_t i = 0; i < 4; i++) {
    char rel[64], *a, *b, *ref;
    snprintf(rel, sizeof(rel), "%s.cubin", rels[i]);
    a = th_path(o1, rel);
    b = th_path(o2, rel);
    ref = th_path(f->root, "single.cubin");
    snprintf(rel, sizeof(rel), "%s.cu", rels[i]);
    single(f, rel, ref);
    assert_same_file(a, b);
    assert_same_file(a, ref);
    free(a);
    free(b);
    free(ref);
  }
  gpujit_project_free(p1);
  gpujit_project_free(p2);
  free(o1);
  free(o2);
}

/* -j 2, four heavy modules of one include block: the plan has both workers make the block's PCH
 * first and use it for one more module each; every module is byte for byte its --no-pch build. */
static void test_project__pch_plan_at_j2_same_bytes(void **state)
{
  fx *f = *state;
  char *out = th_path(f->root, "out");
  gpujit_project *p;
  gpujit_project_summary s;
  put_heavy(f, "h1.cu", "h1", 1);
  put_heavy(f, "h2.cu", "h2", 2);
  put_heavy(f, "h3.cu", "h3", 3);
  put_heavy(f, "h4.cu", "h4", 4);
  p = run_dir(f, out, 2, NULL, NULL, 0);
  gpujit_project_summary_get(p, &s);
  assert_int_equal(s.built, 4);
  assert_int_equal(s.workers, 2);
  if (s.pch_created != 2 || s.pch_used != 2)
    fail_msg("-j 2: %zu PCHs made, %zu used (the plan: 2 and 2)", s.pch_created, s.pch_used);
  for (int i = 1; i <= 4; i++) {
    char rel[32], *built, *ref = th_path(f->root, "single.cubin");
    snprintf(rel, sizeof(rel), "h%d.cubin", i);
    built = th_path(out, rel);
    snprintf(rel, sizeof(rel), "h%d.cu", i);
    single(f, rel, ref);
    assert_same_file(built, ref);
    free(built);
    free(ref);
  }
  gpujit_project_free(p);
  free(out);
}

/* A manifest: named modules, a two-file LTO module, per-module defines, explicit outputs. */
static void test_project__manifest(void **state)
{
  fx *f = *state;
  gpujit_project *p = NULL;
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit_module_options o = opts90();
  char *manifest = th_path(f->src, "m.json"), *out = th_path(f->root, "out/v.cubin");
  const gpujit_project_result *r;
  put(f, "v.cu", "extern \"C\" __global__ void v(int *x) { x[0] = VALUE; }\n");
  put(f, "a.cu", "__device__ int twice(int x);\nextern \"C\" __global__ void a(int *x) { x[0] = twice(x[1]); }\n");
  put(f, "b.cu", "__device__ int twice(int x) { return 2 * x; }\n");
  put(f, "m.json", "{\"modules\": [{\"name\": \"v\", \"files\": [\"v.cu\"], \"options\": {\"defines\": [\"VALUE=7\"]},"
                   " \"output\": \"../out/v.cubin\"}, {\"name\": \"linked\", \"files\": [\"a.cu\", \"b.cu\"]}]}");
  assert_int_equal(gpujit_project_create(&p), 0);
  assert_int_equal(gpujit_project_add_manifest(p, manifest, NULL, &o, NULL), 0);
  assert_int_equal(gpujit_project_count(p), 2);
  po.jobs = 2;
  po.cache = f->cache;
  po.keep_modules = 1;
  assert_int_equal(gpujit_project_build(p, &po), 0);
  assert_true(th_exists(out));
  r = result_named(p, "linked");
  assert_int_equal(r->status, GPUJIT_PROJECT_BUILT);
  assert_non_null(r->module);
  assert_string_equal(gpujit_module_kernel(r->module, 0), "a");
  assert_non_null(strstr(r->output, "/src/linked.cubin"));
  /* again: everything is a hit in this process, no worker started */
  assert_int_equal(gpujit_project_build(p, &po), 0);
  {
    gpujit_project_summary s;
    gpujit_project_summary_get(p, &s);
    assert_int_equal(s.hits, 2);
    assert_int_equal(s.workers, 0);
  }
  gpujit_project_free(p);
  free(manifest);
  free(out);
}

/* A failing module does not stop the others; its diagnostics are whole in its result. */
static void test_project__failure_among_good(void **state)
{
  fx *f = *state;
  gpujit_project *p;
  const gpujit_project_result *bad;
  gpujit_project_summary s;
  put_small(f, "a.cu", "a", 1);
  put(f, "bad.cu", "extern \"C\" __global__ void bad(float *x) { x[0] = nope; }\n");
  put_small(f, "c.cu", "c", 3);
  p = run_dir(f, NULL, 2, f->cache, NULL, GPUJIT_ECOMPILE);
  bad = result_named(p, "bad");
  assert_int_equal(bad->status, GPUJIT_PROJECT_FAILED);
  assert_int_equal(bad->error, GPUJIT_ECOMPILE);
  assert_non_null(strstr(bad->message, "bad.cu:1:"));
  assert_non_null(strstr(bad->log, "identifier \"nope\" is undefined"));
  assert_int_equal(result_named(p, "a")->status, GPUJIT_PROJECT_BUILT);
  assert_int_equal(result_named(p, "c")->status, GPUJIT_PROJECT_BUILT);
  gpujit_project_summary_get(p, &s);
  assert_int_equal(s.failed, 1);
  assert_int_equal(s.built, 2);
  gpujit_project_free(p);
}

/* Kill one worker the first time two are busy compiling. */
typedef struct killer {
  int killed;
} killer;

static int kill_a_worker(void)
{
  DIR *d = opendir("/proc");
  struct dirent *e;
  int killed = 0;
  while (d && !killed && (e = readdir(d))) {
    char path[300], buf[512];
    FILE *fp;
    long pid = strtol(e->d_name, NULL, 10), ppid = 0;
    if (pid <= 0)
      continue;
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if (!(fp = fopen(path, "r")))
      continue;
    if (fgets(buf, sizeof(buf), fp)) {
      char *close = strrchr(buf, ')');
      if (close && strstr(buf, "(gpujit-worker)") && sscanf(close + 2, "%*c %ld", &ppid) == 1 && ppid == getpid())
        killed = kill((pid_t)pid, SIGKILL) == 0;
    }
    fclose(fp);
  }
  if (d)
    closedir(d);
  return killed;
}

static void on_progress_kill(void *user, const gpujit_project_progress *pr)
{
  killer *k = user;
  if (!k->killed && pr->running == 2 && pr->elapsed_ms > 300)
    k->killed = kill_a_worker();
}

static void test_project__worker_killed(void **state)
{
  fx *f = *state;
  gpujit_project *p = NULL;
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit_module_options o = opts90();
  gpujit_project_summary s;
  killer k = {0};
  size_t dead = 0;
  put_heavy(f, "h1.cu", "h1", 1);
  put_heavy(f, "h2.cu", "h2", 2);
  put_small(f, "s1.cu", "s1", 1);
  put_small(f, "s2.cu", "s2", 2);
  assert_int_equal(gpujit_project_create(&p), 0);
  assert_int_equal(gpujit_project_add_dir(p, f->src, NULL, &o, NULL), 0);
  po.jobs = 2;
  po.cache = f->cache;
  po.on_progress = on_progress_kill;
  po.user = &k;
  assert_int_equal(gpujit_project_build(p, &po), GPUJIT_ECOMPILE);
  assert_true(k.killed);
  for (size_t i = 0; i < gpujit_project_count(p); i++) {
    const gpujit_project_result *r = gpujit_project_result_get(p, i);
    if (r->status == GPUJIT_PROJECT_FAILED) {
      dead++;
      assert_int_equal(r->error, GPUJIT_EWORKER);
      if (!strstr(r->message, "killed by signal 9") || !strstr(r->message, r->name))
        fail_msg("message: %s", r->message);
    } else {
      assert_int_equal(r->status, GPUJIT_PROJECT_BUILT);
    }
  }
  assert_int_equal(dead, 1);
  gpujit_project_summary_get(p, &s);
  assert_true(s.workers >= 2);
  /* the cache is consistent: a second build compiles only the module that died */
  assert_int_equal(gpujit_project_build(p, &po), 0);
  gpujit_project_summary_get(p, &s);
  assert_int_equal(s.hits, 3);
  assert_int_equal(s.built, 1);
  {
    uint64_t bad = 0;
    assert_int_equal(gpujit_cache_verify(f->cache, 0, NULL, NULL, NULL, &bad), 0);
    assert_int_equal(bad, 0);
  }
  gpujit_project_free(p);
}

static void on_progress_cancel(void *user, const gpujit_project_progress *pr)
{
  volatile int *cancel = user;
  if (pr->running > 0)
    *cancel = 1;
}

static void test_project__cancel(void **state)
{
  fx *f = *state;
  gpujit_project *p = NULL;
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit_module_options o = opts90();
  volatile int cancel = 0;
  gpujit_project_summary s;
  put_heavy(f, "h1.cu", "h1", 1);
  put_heavy(f, "h2.cu", "h2", 2);
  put_heavy(f, "h3.cu", "h3", 3);
  assert_int_equal(gpujit_project_create(&p), 0);
  assert_int_equal(gpujit_project_add_dir(p, f->src, NULL, &o, NULL), 0);
  po.jobs = 1;
  po.cache = f->cache;
  po.cancel = &cancel;
  po.on_progress = on_progress_cancel;
  po.user = (void *)&cancel;
  assert_int_equal(gpujit_project_build(p, &po), GPUJIT_ECANCELLED);
  gpujit_project_summary_get(p, &s);
  assert_int_equal(s.cancelled, 3);
  assert_true(s.wall_ms < 1500); /* stopped, not finished: each compile takes seconds */
  {
    uint64_t bad = 0;
    assert_int_equal(gpujit_cache_verify(f->cache, 0, NULL, NULL, NULL, &bad), 0);
    assert_int_equal(bad, 0);
  }
  gpujit_project_free(p);
}

/* One trace: a track per worker, each module's span with NVRTC phases nested, the critical path. */
static void test_project__trace(void **state)
{
  fx *f = *state;
  gpujit_trace *t = NULL;
  gpujit_project *p;
  char *json = NULL;
  cJSON *root, *e;
  size_t tracks = 0, builds = 0, nvrtc = 0, critical = 0, workers = 0;
  put_small(f, "a.cu", "a", 1);
  put_small(f, "b.cu", "b", 2);
  put_small(f, "c.cu", "c", 3);
  assert_int_equal(gpujit_trace_create(&t, NULL), 0);
  p = run_dir(f, NULL, 2, f->cache, t, 0);
  assert_int_equal(gpujit_trace_to_json(&json, NULL, t), 0);
  root = tc_check(json, &tracks);
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
    const char *name = cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring;
    const char *ph = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
    const char *cat = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "cat"));
    cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    if (!strcmp(ph, "M") && !strcmp(name, "thread_name") &&
        !strncmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "name")), "worker ", 7))
      workers++;
    if (!strcmp(ph, "X") && !strncmp(name, "build ", 6) &&
        !strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "cache")), "miss"))
      builds++;
    if (!strcmp(ph, "X") && cat && !strcmp(cat, "critical path"))
      critical++;
    if (!strcmp(ph, "X") && cat && !strncmp(cat, "nvrtc", 5))
      nvrtc++;
  }
  assert_int_equal(workers, 2);
  assert_int_equal(builds, 3);
  assert_true(critical >= 1);
  assert_true(nvrtc >= 3);
  cJSON_Delete(root);
  gpujit_free(json);
  gpujit_trace_free(t);
  gpujit_project_free(p);
}

/* NVRTC never checks whether a PCH's headers changed: gpujit must, in one process. */
/* A PCH made from t.h is never used once t.h changed, however the block spells its #include. */
static void pch_never_stale(const fx *f, const char *include_t)
{
  gpujit_module_options o = opts90();
  char *path = th_path(f->src, "k.cu"), text[512];
  const char *pp = path;
  int values[] = {5, 6, 7};
  snprintf(text, sizeof(text), "%s#include <cub/block/block_reduce.cuh>\n"
           "extern \"C\" __global__ void k(int *o) { o[0] = VALX; }\n", include_t);
  put(f, "k.cu", text);
  o.pch = GPUJIT_PCH_ON;
  for (int i = 0; i < 3; i++) {
    char header[64], want[64], *ptx;
    gpujit_module *m = NULL;
    size_t n;
    const char *reason;
    snprintf(header, sizeof(header), "#define VALX %d\n", values[i]);
    put(f, "t.h", header);
    o.output = GPUJIT_OUTPUT_PTX;
    assert_int_equal(gpujit_module_build_files(&m, &pp, 1, &o), 0);
    {
      const char *img = gpujit_module_image(m, &n);
      ptx = strndup(img, n);
    }
    snprintf(want, sizeof(want), ", %d;", values[i]);
    if (!strstr(ptx, want))
      fail_msg("build %d: PTX lacks the header's value %d: %s", i, values[i], strstr(ptx, "st.global") ? strstr(ptx, "st.global") - 40 : "(no store)");
    same_as_without_pch(m, o, NULL, path);
    gpujit_module_pch(m, &reason);
    if (i > 0 && !strstr(reason, "t.h changed since the PCH was made"))
      fail_msg("build %d: pch %s (%s)", i, gpujit_pch_status_name(gpujit_module_pch(m, NULL)), reason);
    free(ptx);
    gpujit_module_free(m);
  }
  /* unchanged: the PCH is used, and says so */
  {
    gpujit_module *m = NULL;
    assert_int_equal(gpujit_module_build_files(&m, &pp, 1, &o), 0);
    assert_int_equal(gpujit_module_pch(m, NULL), GPUJIT_PCH_STATUS_USED);
    same_as_without_pch(m, o, NULL, path);
    assert_null(strstr(gpujit_module_log(m), "precompiled header")); /* NVRTC's messages are not the user's */
    gpujit_module_free(m);
  }
  free(path);
}

static void test_project__pch_never_stale(void **state) { pch_never_stale(*state, "#include \"t.h\"\n"); }

/* Spellings a line-by-line reading misses: the PCH check must know t.h all the same. */
static void test_project__pch_never_stale_through_spellings(void **state)
{
  pch_never_stale(*state, "/* the config */ #include \"t.h\"\n");
  pch_never_stale(*state, "#inc\\\nlude \"t.h\"\n");
  pch_never_stale(*state, "%:include \"t.h\"\n");
}

/* A prelude no longer needs a #line: the PCH is made and used, and lines keep their numbers. */
static void test_project__prelude_keeps_pch_and_lines(void **state)
{
  fx *f = *state;
  gpujit_module_options o = opts90();
  const char *src = "#include <cub/block/block_reduce.cuh>\n__global__ void k(float *y)\n{\n  y[0] = SCALE;\n}\n";
  const char *bad = "#include <cub/block/block_reduce.cuh>\n__global__ void k(float *y)\n{\n  y[0] = SCALE * nope;\n}\n";
  gpujit_source s = {"/virtual/pre.cu", src, strlen(src)}, sb = {"/virtual/pre.cu", bad, strlen(bad)};
  gpujit_module *m = NULL;
  (void)f;
  o.prelude = "#define SCALE 2.0f\n#define OTHER 1\n";
  o.pch = GPUJIT_PCH_ON;
  assert_int_equal(gpujit_module_build_sources(&m, &s, 1, &o), 0);
  assert_int_equal(gpujit_module_pch(m, NULL), GPUJIT_PCH_STATUS_CREATED);
  same_as_without_pch(m, o, &s, NULL);
  gpujit_module_free(m);
  assert_int_equal(gpujit_module_build_sources(&m, &sb, 1, &o), GPUJIT_ECOMPILE);
  if (!strstr(gpujit_error_last(), "/virtual/pre.cu:4:18: identifier \"nope\" is undefined"))
    fail_msg("got '%s'", gpujit_error_last());
  assert_int_equal(gpujit_module_build_sources(&m, &s, 1, &o), 0);
  assert_int_equal(gpujit_module_pch(m, NULL), GPUJIT_PCH_STATUS_USED);
  same_as_without_pch(m, o, &s, NULL);
  gpujit_module_free(m);
}

/* NVRTC asks for a bigger PCH heap: gpujit grows it and compiles again, so the PCH is made. */
static void test_project__pch_heap_grows(void **state)
{
  fx *f = *state;
  gpujit_module_options o = opts90();
  const gpujit__nvrtc_api *api;
  const gpujit__nvrtc_pch_api *pch;
  char *path = th_path(f->src, "heap.cu");
  const char *pp = path, *reason;
  gpujit_module *m = NULL;
  unsigned long before;
  size_t heap = 0;
  put_heavy(f, "heap.cu", "heap", 1);
  assert_int_equal(gpujit__nvrtc_api_get(&api), 0);
  assert_non_null(pch = gpujit__nvrtc_pch_api_get());
  assert_int_equal(pch->nvrtcSetPCHHeapSize((size_t)1 << 20), NVRTC_SUCCESS);
  o.pch = GPUJIT_PCH_ON;
  before = gpujit__nvrtc_compiles;
  assert_int_equal(gpujit_module_build_files(&m, &pp, 1, &o), 0);
  assert_int_equal(gpujit_module_pch(m, &reason), GPUJIT_PCH_STATUS_CREATED);
  if (!strstr(reason, "PCH heap too small") || !strstr(reason, "compiling again"))
    fail_msg("reason: %s", reason);
  assert_int_equal(gpujit__nvrtc_compiles - before, 2);
  assert_null(strstr(gpujit_module_log(m), "insufficient preallocated memory")); /* NVRTC's warning is ours */
  assert_int_equal(pch->nvrtcGetPCHHeapSize(&heap), NVRTC_SUCCESS);
  assert_true(heap > ((size_t)64 << 20));
  same_as_without_pch(m, o, NULL, path);
  gpujit_module_free(m);
  free(path);
}

/* A block header reached again after the block through another name — a hard link, a symbolic
 * link — with #pragma once: NVRTC without a PCH knows the file and skips it; with a PCH it reads
 * it a second time and makes other code. So such a module gets no PCH, and every build of it is
 * what a build without one is, however many follow in the process. */
static void pch_one_file_two_names(const fx *f, bool hard)
{
  gpujit_module_options o = opts90();
  char *path = th_path(f->src, "k.cu"), *a = th_path(f->src, "a.h"), *other = th_path(f->src, "a_other.h");
  const char *pp = path;
  gpujit_pch_status status[3];
  put(f, "a.h", "#pragma once\n#ifdef A_SEEN\n#define A_TWICE 1\n#endif\n#define A_SEEN 1\n");
  unlink(other);
  assert_int_equal(hard ? link(a, other) : symlink(a, other), 0);
  put(f, "k.cu", "#include \"a.h\"\ntypedef int code_begins;\n#include \"a_other.h\"\n"
                 "extern \"C\" __global__ void k(int *o)\n{\n#ifdef A_TWICE\n  o[0] = 222;\n#else\n  o[0] = 111;\n#endif\n}\n");
  o.pch = GPUJIT_PCH_ON;
  o.output = GPUJIT_OUTPUT_PTX;
  for (int i = 0; i < 3; i++) {
    gpujit_module *m = NULL;
    size_t n;
    const char *img, *reason;
    char *ptx;
    assert_int_equal(gpujit_module_build_files(&m, &pp, 1, &o), 0);
    img = gpujit_module_image(m, &n);
    ptx = strndup(img, n);
    if (!strstr(ptx, ", 111;"))
      fail_msg("build %d (pch %s): a.h was read twice", i, gpujit_pch_status_name(gpujit_module_pch(m, NULL)));
    free(ptx);
    same_as_without_pch(m, o, NULL, path);
    status[i] = gpujit_module_pch(m, &reason);
    if (i > 0 && !strstr(reason, "one file by two paths")) /* the first: no PCH had been made */
      fail_msg("build %d: pch %s, reason '%s'", i, gpujit_pch_status_name(status[i]), reason);
    gpujit_module_free(m);
  }
  for (int i = 0; i < 3; i++)
    assert_int_equal(status[i], GPUJIT_PCH_STATUS_NONE);
  free(path), free(a), free(other);
}

static void test_project__pch_not_for_a_hard_link(void **state) { pch_one_file_two_names(*state, true); }
static void test_project__pch_not_for_a_symbolic_link(void **state) { pch_one_file_two_names(*state, false); }

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_project__dir_same_bytes_as_single, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__pch_plan_at_j2_same_bytes, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__manifest, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__failure_among_good, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__worker_killed, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__cancel, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__trace, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__pch_never_stale, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__pch_never_stale_through_spellings, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__prelude_keeps_pch_and_lines, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__pch_heap_grows, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__pch_not_for_a_hard_link, setup, teardown),
    cmocka_unit_test_setup_teardown(test_project__pch_not_for_a_symbolic_link, setup, teardown),
  };
  setenv("GPUJIT_WORKER", GPUJIT_WORKER_PATH, 1);
  setenv("GPUJIT_ARCH", "sm_90", 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
