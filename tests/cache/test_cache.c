/* The kernel cache: key sensitivity, corruption, concurrency, unwritable caches, maintenance,
 * relocation. Every test works in fresh temporary directories, never the user's cache. */
#include <pthread.h>
#include <sys/time.h>

#include "helpers.h"

#include "compile/nvrtc/nvrtc.h"
#include "gpujit.h"

typedef struct fixture {
  char *root;     /* temporary directory */
  char *checkout; /* root/a: a small project with headers */
  char *cache_dir;
} fixture;

static char *kernel_path(const fixture *f) { return th_path(f->checkout, "k.cu"); }

static int setup(void **state)
{
  fixture *f = calloc(1, sizeof(*f));
  char *p;
  f->root = th_tmpdir();
  f->checkout = th_path(f->root, "a");
  f->cache_dir = th_path(f->root, "cache");
  mkdir(f->checkout, 0755);
  p = th_path(f->checkout, "inc");
  mkdir(p, 0755);
  free(p);
  free(th_write(f->checkout, "k.cu",
                "#include \"inc/params.h\"\n"
                "extern \"C\" __global__ void k(int n, float *x)\n"
                "{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] = scale(x[i]);\n}\n"));
  free(th_write(f->checkout, "inc/params.h", "#pragma once\n#include \"deep.h\"\n"
                                             "__device__ inline float scale(float v) { return v * FACTOR; }\n"));
  free(th_write(f->checkout, "inc/deep.h", "#define FACTOR 2.0f\n"));
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fixture *f = *state;
  th_rmrf(f->root);
  free(f->root);
  free(f->checkout);
  free(f->cache_dir);
  free(f);
  return 0;
}

static gpujit_cache *open_cache(const char *dir, const char *base)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *c = NULL;
  co.dir = dir;
  co.base_dir = base;
  assert_int_equal(gpujit_cache_open(&c, &co), 0);
  return c;
}

/* Build k.cu with the options; returns the module (caller frees). */
static gpujit_module *build(const fixture *f, gpujit_cache *c, gpujit_module_options *o)
{
  char *path = kernel_path(f);
  const char *p = path;
  gpujit_module *m = NULL;
  o->cache = c;
  if (!o->arch)
    o->arch = "sm_90";
  if (gpujit_module_build_files(&m, &p, 1, o) != 0)
    fail_msg("build failed: %s\n%s", gpujit_error_last(), gpujit_error_log());
  free(path);
  return m;
}

static gpujit_cache_status status_of(const fixture *f, gpujit_cache *c, gpujit_module_options *o)
{
  gpujit_module *m = build(f, c, o);
  gpujit_cache_status s = gpujit_module_cache_status(m);
  gpujit_module_free(m);
  return s;
}

static void test_cache__hit_without_nvrtc(void **state)
{
  fixture *f = *state;
  gpujit_cache *c = open_cache(f->cache_dir, NULL);
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *a = build(f, c, &o), *b;
  unsigned long compiles;
  const void *ia, *ib;
  size_t sa, sb;
  gpujit_cache_stats st;
  gpujit_module_timings t;
  assert_int_equal(gpujit_module_cache_status(a), GPUJIT_CACHE_MISS);
  compiles = gpujit__nvrtc_compiles;
  b = build(f, c, &o);
  assert_int_equal(gpujit_module_cache_status(b), GPUJIT_CACHE_HIT);
  assert_int_equal(gpujit__nvrtc_compiles, compiles); /* NVRTC was not called */
  ia = gpujit_module_image(a, &sa);
  ib = gpujit_module_image(b, &sb);
  assert_int_equal(sa, sb);
  assert_memory_equal(ia, ib, sa);
  assert_string_equal(gpujit_module_kernel(b, 0), "k");
  assert_string_equal(gpujit_module_cache_key(a), gpujit_module_cache_key(b));
  gpujit_module_timings_get(b, &t);
  assert_true(t.saved_ms > 0);
  assert_int_equal(gpujit_cache_stats_get(c, &st), 0);
  assert_int_equal(st.entries, 1);
  assert_int_equal(st.hits, 1);
  assert_int_equal(st.misses, 1);
  assert_int_equal(st.stores, 1);
  assert_true(st.compile_ms_saved > 0);
  gpujit_module_free(a);
  gpujit_module_free(b);
  gpujit_cache_free(c);
}

static void rewrite(const fixture *f, const char *rel, const char *content)
{
  free(th_write(f->checkout, rel, content));
}

static void test_cache__key_sensitivity(void **state)
{
  fixture *f = *state;
  gpujit_cache *c = open_cache(f->cache_dir, NULL);
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *d1[] = {"A=1", "B=2"}, *d2[] = {"B=2", "A=1"}, *d3[] = {"A=1", "B=3"};
  const char *exprs[] = {"k"};
  char *path = kernel_path(f);
  struct timeval times[2] = {{1000000000, 0}, {1000000000, 0}};
  gpujit_trace *trace = NULL;

  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_HIT);
  /* Touching without changing hits. */
  assert_int_equal(utimes(path, times), 0);
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_HIT);
  /* Editing a header included transitively misses. */
  rewrite(f, "inc/deep.h", "#define FACTOR 3.0f\n");
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_HIT);
  /* Options that change code miss; reordering equivalent ones hits. */
  o.defines = d1;
  o.defines_count = 2;
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  o.defines = d2;
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_HIT);
  o.defines = d3;
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  o.defines_count = 0;
  o.lineinfo = 0;
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  o.lineinfo = 1;
  o.std = "c++20";
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  o.std = NULL;
  o.maxrregcount = 32;
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  o.maxrregcount = 0;
  o.arch = "sm_80";
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  o.arch = "compute_90";
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  o.arch = NULL;
  o.name_expressions = exprs;
  o.name_expressions_count = 1;
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  o.name_expressions_count = 0;
  /* Tracing only affects the trace: it hits. */
  assert_int_equal(gpujit_trace_create(&trace, NULL), 0);
  o.trace = trace;
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_HIT);
  o.trace = NULL;
  gpujit_trace_free(trace);
  /* A header named only in an inactive #if branch cannot change the compile when it appears: a
   * hit. One that __has_include asked for can: a miss. */
  rewrite(f, "k.cu", "#include \"inc/params.h\"\n#if 0\n#include \"later.h\"\n#endif\n"
                     "extern \"C\" __global__ void k(int n, float *x) { if (n) x[0] = scale(x[0]); }\n");
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_HIT);
  rewrite(f, "later.h", "// now here\n");
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_HIT);
  rewrite(f, "k.cu", "#include \"inc/params.h\"\n#if __has_include(\"probe.h\")\n#define X 2\n#endif\n"
                     "extern \"C\" __global__ void k(int n, float *x) { if (n) x[0] = scale(x[0]); }\n");
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_HIT);
  rewrite(f, "probe.h", "// now here\n");
  assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_MISS);
  free(path);
  gpujit_cache_free(c);
}

static char *entry_file(gpujit_cache *c, const char *key, const char *name)
{
  char *dir = NULL, *p;
  assert_int_equal(gpujit_cache_entry_dir(&dir, c, key), 0);
  p = th_path(dir, name);
  gpujit_free(dir);
  return p;
}

typedef enum { FLIP, TRUNCATE, DELETE, GARBAGE_META } damage;

static void test_cache__corruption(void **state)
{
  fixture *f = *state;
  gpujit_cache *c = open_cache(f->cache_dir, NULL);
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *good = build(f, c, &o);
  size_t good_size;
  const void *good_img = gpujit_module_image(good, &good_size);
  char key[33];
  gpujit_cache_stats st;
  uint64_t checked, bad;
  snprintf(key, sizeof(key), "%s", gpujit_module_cache_key(good));
  for (int d = FLIP; d <= GARBAGE_META; d++) {
    char *img = entry_file(c, key, "image.cubin"), *meta = entry_file(c, key, "meta.json");
    gpujit_module *m;
    size_t size;
    const void *bytes;
    FILE *fp;
    switch ((damage)d) {
    case FLIP:
      fp = fopen(img, "r+b");
      fseek(fp, 100, SEEK_SET);
      fputc(fgetc(fp) ^ 0x40, fp);
      fclose(fp);
      break;
    case TRUNCATE: assert_int_equal(truncate(img, 64), 0); break;
    case DELETE: assert_int_equal(unlink(img), 0); break;
    case GARBAGE_META:
      fp = fopen(meta, "wb");
      fputs("{garbage", fp);
      fclose(fp);
      break;
    }
    assert_int_equal(gpujit_cache_verify(c, 0, NULL, NULL, &checked, &bad), 0);
    assert_int_equal(bad, 1);
    m = build(f, c, &o); /* damage is a miss: rebuilt and republished, never wrong bytes */
    assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS);
    bytes = gpujit_module_image(m, &size);
    assert_int_equal(size, good_size);
    assert_memory_equal(bytes, good_img, size);
    gpujit_module_free(m);
    assert_int_equal(status_of(f, c, &o), GPUJIT_CACHE_HIT);
    free(img);
    free(meta);
  }
  assert_int_equal(gpujit_cache_stats_get(c, &st), 0);
  assert_true(st.corrupt >= 4);
  assert_int_equal(gpujit_cache_verify(c, 0, NULL, NULL, &checked, &bad), 0);
  assert_int_equal(checked, 1);
  assert_int_equal(bad, 0);
  gpujit_module_free(good);
  gpujit_cache_free(c);
}

typedef struct tjob {
  const fixture *f;
  gpujit_cache *c;
  int status;
} tjob;

static void *thread_build(void *arg)
{
  tjob *j = arg;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = build(j->f, j->c, &o);
  j->status = gpujit_module_cache_status(m);
  gpujit_module_free(m);
  return NULL;
}

static void test_cache__concurrent_threads(void **state)
{
  fixture *f = *state;
  gpujit_cache *c = open_cache(f->cache_dir, NULL);
  pthread_t th[4];
  tjob jobs[4];
  gpujit_cache_stats st;
  int misses = 0;
  for (int i = 0; i < 4; i++) {
    jobs[i] = (tjob){f, c, 0};
    assert_int_equal(pthread_create(&th[i], NULL, thread_build, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    misses += jobs[i].status == GPUJIT_CACHE_MISS;
  }
  assert_int_equal(gpujit_cache_stats_get(c, &st), 0);
  /* The per-key lock: one thread compiled and stored, the others hit after waiting. */
  assert_int_equal(st.stores, 1);
  assert_int_equal(st.entries, 1);
  assert_int_equal(st.hits + st.stores, 4);
  (void)misses;
  gpujit_cache_free(c);
}

static void test_cache__concurrent_processes(void **state)
{
  fixture *f = *state;
  char *out, *k2 = th_write(f->checkout, "k2.cu", "extern \"C\" __global__ void k2(float *x) { x[0] += 1; }\n");
  gpujit_cache *c;
  gpujit_cache_stats st;
  uint64_t checked, bad;
  /* Eight processes build two overlapping modules at once. */
  int rc = th_run(&out,
                  "cd '%s' && pids=''; for i in 1 2 3 4 5 6 7 8; do "
                  "if [ $((i %% 2)) = 0 ]; then m=k.cu; else m=k2.cu; fi; "
                  "'%s' -q build --arch sm_90 --cache-dir '%s' -o out$i.cubin $m & pids=\"$pids $!\"; done; "
                  "fail=0; for p in $pids; do wait $p || fail=1; done; exit $fail",
                  f->checkout, GPUJIT_CLI, f->cache_dir);
  if (rc != 0)
    fail_msg("a concurrent build failed:\n%s", out);
  free(out);
  c = open_cache(f->cache_dir, NULL);
  assert_int_equal(gpujit_cache_stats_get(c, &st), 0);
  assert_int_equal(st.entries, 2);
  assert_int_equal(st.stores, 2); /* each key compiled and stored once */
  assert_int_equal(st.hits + st.stores, 8);
  assert_int_equal(gpujit_cache_verify(c, 0, NULL, NULL, &checked, &bad), 0);
  assert_int_equal(checked, 2);
  assert_int_equal(bad, 0);
  assert_int_equal(th_run(&out, "cmp '%s/out2.cubin' '%s/out4.cubin'", f->checkout, f->checkout), 0);
  free(out);
  gpujit_cache_free(c);
  free(k2);
}

static void test_cache__unwritable(void **state)
{
  fixture *f = *state;
  char *file = th_write(f->root, "plainfile", "x"), *under = th_path(file, "cache");
  gpujit_cache *c;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m;
  c = open_cache(under, NULL); /* cannot be created: opens read-only */
  assert_false(gpujit_cache_writable(c));
  m = build(f, c, &o);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS);
  assert_int_equal(gpujit_module_kernel_count(m), 1);
  gpujit_module_free(m);
  gpujit_cache_free(c);
  {
    gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
    co.dir = file; /* a file is not a cache */
    assert_int_equal(gpujit_cache_open(&c, &co), GPUJIT_EINVAL);
    assert_non_null(strstr(gpujit_error_last(), "is not a directory"));
  }
  free(file);
  free(under);
}

static int count_cb(const gpujit_cache_entry *e, void *payload)
{
  (*(int *)payload)++;
  assert_int_equal(strlen(e->key), 32);
  assert_string_equal(e->arch, "sm_90");
  return 0;
}

static void test_cache__maintenance(void **state)
{
  fixture *f = *state;
  gpujit_cache *c = open_cache(f->cache_dir, NULL);
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *defs[1];
  char def[32], *tmpfile, *old_entry;
  uint64_t removed, freed;
  gpujit_cache_stats st;
  int n = 0;
  struct timeval old[2] = {{1000000000, 0}, {1000000000, 0}};
  for (int i = 0; i < 3; i++) {
    snprintf(def, sizeof(def), "V=%d", i);
    defs[0] = def;
    o.defines = defs;
    o.defines_count = 1;
    gpujit_module_free(build(f, c, &o));
  }
  assert_int_equal(gpujit_cache_list(c, count_cb, &n), 0);
  assert_int_equal(n, 3);
  /* An in-flight temp file of another process survives clear. */
  tmpfile = th_write(f->cache_dir, "tmp/inflight.partial", "x");
  /* Age one entry: prune --older-than removes exactly it. */
  assert_int_equal(gpujit_cache_stats_get(c, &st), 0);
  {
    gpujit_module *m = build(f, c, &o);
    char *dir = NULL;
    assert_int_equal(gpujit_cache_entry_dir(&dir, c, gpujit_module_cache_key(m)), 0);
    assert_int_equal(utimes(dir, old), 0);
    old_entry = dir;
    gpujit_module_free(m);
  }
  assert_int_equal(gpujit_cache_prune(c, 0, 86400, &removed, &freed), 0);
  assert_int_equal(removed, 1);
  assert_true(freed > 1000);
  assert_false(th_exists(old_entry));
  gpujit_free(old_entry);
  /* Size limit: LRU entries go until what is left fits. */
  assert_int_equal(gpujit_cache_stats_get(c, &st), 0);
  assert_int_equal(st.entries, 2);
  assert_int_equal(gpujit_cache_prune(c, st.bytes - 1, 0, &removed, NULL), 0);
  assert_int_equal(removed, 1);
  assert_int_equal(gpujit_cache_clear(c, &removed), 0);
  assert_int_equal(removed, 1);
  assert_int_equal(gpujit_cache_stats_get(c, &st), 0);
  assert_int_equal(st.entries, 0);
  assert_int_equal(st.hits, 0);
  assert_true(th_exists(tmpfile));
  free(tmpfile);
  {
    char *dir = NULL;
    assert_int_equal(gpujit_cache_entry_dir(&dir, c, "zz"), GPUJIT_EINVAL);
    assert_int_equal(gpujit_cache_entry_dir(&dir, c, "abcd"), GPUJIT_ENOENT);
  }
  gpujit_cache_free(c);
}

typedef struct src_seen {
  int n;
  bool header;
} src_seen;

static int src_cb(const char *named, const char *dump, void *payload)
{
  src_seen *s = payload;
  size_t a, b;
  char *x = th_read(named, &a), *y = th_read(dump, &b);
  s->n++;
  s->header |= strstr(named, "inc/deep.h") != NULL;
  assert_non_null(x);
  assert_non_null(y);
  assert_int_equal(a, b);
  assert_memory_equal(x, y, a);
  free(x);
  free(y);
  return 0;
}

static void test_cache__source_dump(void **state)
{
  fixture *f = *state;
  gpujit_cache *c = open_cache(f->cache_dir, NULL);
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = build(f, c, &o);
  src_seen s = {0, false};
  assert_int_equal(gpujit_cache_sources(c, gpujit_module_cache_key(m), src_cb, &s), 0);
  assert_int_equal(s.n, 3); /* k.cu, inc/params.h, inc/deep.h at the paths the line table names */
  assert_true(s.header);
  gpujit_module_free(m);
  gpujit_cache_free(c);
}

typedef struct dump_find {
  const char *suffix;
  char *content;
} dump_find;

static int find_dump(const char *named, const char *dump, void *payload)
{
  dump_find *d = payload;
  size_t n = strlen(named), m = strlen(d->suffix);
  if (n >= m && strcmp(named + n - m, d->suffix) == 0)
    d->content = th_read(dump, NULL);
  return 0;
}

/* Edit and rebuild: the old entry keeps the old text beside the old binary, the new the new. */
static void test_cache__dump_matches_binary_after_edit(void **state)
{
  fixture *f = *state;
  gpujit_cache *c = open_cache(f->cache_dir, NULL);
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *old_m = build(f, c, &o), *new_m;
  char *path = kernel_path(f), *old_text = th_read(path, NULL), *new_text;
  dump_find d = {"/k.cu", NULL};
  rewrite(f, "k.cu", "#include \"inc/params.h\"\n// edited\nextern \"C\" __global__ void k(int n, float *x) { x[0] = scale(x[n]); }\n");
  new_text = th_read(path, NULL);
  new_m = build(f, c, &o);
  assert_string_not_equal(gpujit_module_cache_key(old_m), gpujit_module_cache_key(new_m));
  assert_int_equal(gpujit_cache_sources(c, gpujit_module_cache_key(old_m), find_dump, &d), 0);
  assert_string_equal(d.content, old_text);
  free(d.content);
  d.content = NULL;
  assert_int_equal(gpujit_cache_sources(c, gpujit_module_cache_key(new_m), find_dump, &d), 0);
  assert_string_equal(d.content, new_text);
  free(d.content);
  free(old_text);
  free(new_text);
  free(path);
  gpujit_module_free(old_m);
  gpujit_module_free(new_m);
  gpujit_cache_free(c);
}

/* The toolkit is what its files hold: a byte-identical copy of NVRTC elsewhere (another image's
 * install) and the root reached through a symlink (/usr/local/cuda against /usr/local/cuda-13.0)
 * hit; an NVRTC whose bytes differ misses. */
static void test_cache__toolkit_by_content(void **state)
{
  fixture *f = *state;
  char *out, *tk = th_path(f->root, "toolkit"), *other = th_path(f->root, "other"), *link = th_path(f->root, "cuda-link");
  int rc;
  rc = th_run(&out,
              "set -e; mkdir -p '%s' '%s'; cp -L /usr/local/cuda/lib64/libnvrtc.so.13 /usr/local/cuda/lib64/libnvrtc-builtins.so.13.* '%s'/; "
              "cp -L /usr/local/cuda/lib64/libnvrtc.so.13 /usr/local/cuda/lib64/libnvrtc-builtins.so.13.* '%s'/; "
              "printf x >> '%s'/libnvrtc.so.13; ln -sfn \"$(readlink -f /usr/local/cuda)\" '%s'; "
              "cd '%s'; g='%s'; echo first; $g build --arch sm_90 --cache-dir '%s' -o a.cubin k.cu | head -1; "
              "echo copy; GPUJIT_NVRTC_LIBRARY='%s/libnvrtc.so.13' $g build --arch sm_90 --cache-dir '%s' -o b.cubin k.cu | head -1; "
              "echo link; CUDA_PATH='%s' $g build --arch sm_90 --cache-dir '%s' -o c.cubin k.cu | head -1; "
              "echo changed; GPUJIT_NVRTC_LIBRARY='%s/libnvrtc.so.13' $g build --arch sm_90 --cache-dir '%s' -o d.cubin k.cu | head -1",
              tk, other, tk, other, other, link, f->checkout, GPUJIT_CLI, f->cache_dir, tk, f->cache_dir, link, f->cache_dir,
              other, f->cache_dir);
  if (rc != 0)
    fail_msg("rc %d:\n%s", rc, out);
  {
    const char *first = strstr(out, "first\n"), *copy = strstr(out, "copy\n"), *lnk = strstr(out, "link\n"),
               *changed = strstr(out, "changed\n");
    assert_non_null(first), assert_non_null(copy), assert_non_null(lnk), assert_non_null(changed);
    if (!strstr(first, "miss") || strstr(first, "miss") > copy || !strstr(copy, " hit ") || strstr(copy, " hit ") > lnk ||
        !strstr(lnk, " hit ") || strstr(lnk, " hit ") > changed || !strstr(changed, "miss"))
      fail_msg("want miss, hit (a copy), hit (through a symlink), miss (other bytes):\n%s", out);
  }
  free(out);
  free(tk), free(other), free(link);
}

/* Copy cache and checkout elsewhere: a hit, and the image names the new checkout's files. */
static void test_cache__relocation(void **state)
{
  fixture *f = *state;
  char *b = th_path(f->root, "b"), *cache2 = th_path(f->root, "cach2"), *out;
  gpujit_cache *c = open_cache(f->cache_dir, f->checkout), *c2;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = build(f, c, &o);
  fixture moved = *f;
  const void *img;
  size_t size;
  char want[4096];
  gpujit_module_free(m);
  gpujit_cache_free(c);
  assert_int_equal(th_run(&out, "cp -a '%s' '%s' && cp -a '%s' '%s'", f->checkout, b, f->cache_dir, cache2), 0);
  free(out);
  moved.checkout = b;
  c2 = open_cache(cache2, b);
  m = build(&moved, c2, &o);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_HIT);
  img = gpujit_module_image(m, &size);
  assert_non_null(memmem(img, size, b, strlen(b)));
  assert_null(memmem(img, size, f->checkout, strlen(f->checkout)));
  snprintf(want, sizeof(want), "%s/inc", b);
  assert_non_null(memmem(img, size, want, strlen(want)));
  gpujit_module_free(m);
  gpujit_cache_free(c2);
  free(b);
  free(cache2);
}

/* A checkout moved to a path of another length: still a hit, and the line table names the new
 * files (the cubin's .debug_line rebuilt; readelf reads it back). */
static void test_cache__relocation_other_length(void **state)
{
  fixture *f = *state;
  char *b = th_path(f->root, "a-moved-further"), *out, *served = th_path(f->root, "served.cubin");
  gpujit_cache *c = open_cache(f->cache_dir, f->checkout), *c2;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = build(f, c, &o), *m2;
  fixture moved = *f;
  size_t size, size2;
  const void *img = gpujit_module_image(m, &size), *img2;
  gpujit_cache_free(c);
  assert_int_equal(th_run(&out, "cp -a '%s' '%s'", f->checkout, b), 0);
  free(out);
  moved.checkout = b;
  c2 = open_cache(f->cache_dir, b);
  m2 = build(&moved, c2, &o);
  assert_int_equal(gpujit_module_cache_status(m2), GPUJIT_CACHE_HIT);
  img2 = gpujit_module_image(m2, &size2);
  assert_true(size2 > size);
  assert_int_equal(gpujit_module_kernel_count(m2), 1); /* still a cubin we can read */
  assert_int_equal(gpujit_module_write(m2, served), 0);
  assert_int_equal(th_run(&out, "readelf --debug-dump=rawline '%s' 2>&1 | grep -A3 'Directory Table'", served), 0);
  if (!strstr(out, b) || strstr(out, "a/inc") && !strstr(out, "a-moved-further/inc"))
    fail_msg("line table directories:\n%s", out);
  free(out);
  assert_int_equal(th_run(&out, "readelf --debug-dump=decodedline '%s' 2>&1 | grep -c 'k.cu'", served), 0);
  assert_true(atoi(out) > 0); /* the line program still decodes */
  free(out);
  (void)img;
  (void)img2;
  gpujit_module_free(m);
  gpujit_module_free(m2);
  gpujit_cache_free(c2);
  free(b);
  free(served);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_cache__relocation_other_length, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__hit_without_nvrtc, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__key_sensitivity, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__corruption, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__concurrent_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__concurrent_processes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__unwritable, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__maintenance, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__source_dump, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__relocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__dump_matches_binary_after_edit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache__toolkit_by_content, setup, teardown),
  };
  if (getenv("TEST_FILTER"))
    cmocka_set_test_filter(getenv("TEST_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
