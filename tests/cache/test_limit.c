/* The cache's size limit: sizes parsed, the limit from the environment or the cache's setting,
 * least recently used entries evicted after a store so the cache never stays above it, and an
 * entry being read never torn away. */
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <ftw.h>

#include "fixture.h"
#include "helpers.h"

#include "gpujit.h"

typedef struct fx {
  TH_CACHE_FIXTURE;
} fx;

static int setup(void **state)
{
  fx *f = calloc(1, sizeof(*f));
  unsetenv("GPUJIT_CACHE_MAX_SIZE");
  th_cache_setup(f);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;
  unsetenv("GPUJIT_CACHE_MAX_SIZE");
  th_cache_teardown(f);
  free(f);
  return 0;
}

/* Module i: its own source, so its own entry. */
static gpujit_module *build(fx *f, int i)
{
  char name[64], text[256], *path;
  const char *p;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  snprintf(name, sizeof(name), "k%d.cu", i);
  snprintf(text, sizeof(text), "extern \"C\" __global__ void k%d(float *x) { x[threadIdx.x] *= %d.0f; }\n", i, i + 2);
  path = th_write(f->root, name, text);
  p = path;
  o.arch = "sm_90";
  o.cache = f->cache;
  if (gpujit_module_build_files(&m, &p, 1, &o) != 0)
    fail_msg("build %d: %s", i, gpujit_error_last());
  free(path);
  return m;
}

/* What du counts under a directory: every file and directory's allocated blocks. */
static uint64_t du_total;
static int du_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)path, (void)flag, (void)ftw;
  du_total += (uint64_t)st->st_blocks * 512;
  return 0;
}

/* What `cache stats` says the cache holds, checked against the disk itself. */
static uint64_t cache_bytes(fx *f, uint64_t *entries)
{
  gpujit_cache_stats st;
  assert_int_equal(gpujit_cache_stats_get(f->cache, &st), 0);
  if (entries)
    *entries = st.entries;
  du_total = 0;
  nftw(f->cache_dir, du_one, 16, FTW_PHYS);
  assert_int_equal(st.bytes, du_total); /* the disk, not the content bytes */
  return st.bytes;
}

/* The public parser is ccache's (tests/base/test_units.c has every unit): a bare number is GiB. */
static void test_limit__parse(void **state)
{
  uint64_t v;
  double age;
  (void)state;
  assert_int_equal(gpujit_cache_parse_size("5", &v), 0);
  assert_int_equal(v, 5ULL << 30);
  assert_int_equal(gpujit_cache_parse_size("2G", &v), 0);
  assert_int_equal(v, 2000000000ULL);
  assert_int_equal(gpujit_cache_parse_size("2GiB", &v), 0);
  assert_int_equal(v, 2ULL << 30);
  assert_int_equal(gpujit_cache_parse_size("500MB", &v), 0);
  assert_int_equal(v, 500000000ULL);
  assert_int_equal(gpujit_cache_parse_size("64MiB", &v), 0);
  assert_int_equal(v, 64ULL << 20);
  assert_int_equal(gpujit_cache_parse_size("4096B", &v), 0);
  assert_int_equal(v, 4096);
  assert_int_equal(gpujit_cache_parse_size("none", &v), 0);
  assert_int_equal(v, 0);
  assert_int_equal(gpujit_cache_parse_size("12X", &v), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "invalid size '12X'"));
  assert_int_equal(gpujit_cache_parse_size("-1G", &v), GPUJIT_EINVAL);
  assert_int_equal(gpujit_cache_parse_size("", &v), GPUJIT_EINVAL);
  assert_int_equal(gpujit_cache_parse_age("7d", &age), 0);
  assert_true(age == 7 * 86400);
  assert_int_equal(gpujit_cache_parse_age("3600", &age), GPUJIT_EINVAL);
}

/* The setting kept in the cache is bytes (as gpujit_cache_limit_set writes it, and as caches made
 * before sizes followed ccache hold it): never read as GiB. */
static void test_limit__kept_setting_is_bytes(void **state)
{
  fx *f = *state;
  uint64_t got = 0;
  char *p = th_path(f->cache_dir, "max_size");
  FILE *w = fopen(p, "w");
  assert_non_null(w);
  fputs("1048576\n", w);
  fclose(w);
  assert_int_equal(gpujit_cache_limit_get(f->cache, &got, NULL), 0);
  assert_int_equal(got, 1048576);
  free(p);
}

/* A limit that evicts says what it evicted: a ccache habit (-M 5) once emptied caches silently. */
static void test_limit__set_reports_evicted(void **state)
{
  fx *f = *state;
  uint64_t removed = 99, freed = 99, entries;
  for (int i = 0; i < 3; i++)
    gpujit_module_free(build(f, i));
  assert_true(cache_bytes(f, &entries) > 0);
  assert_int_equal(entries, 3);
  assert_int_equal(gpujit_cache_limit_set(f->cache, 5ULL << 30, &removed, &freed), 0); /* room: none go */
  assert_int_equal(removed, 0);
  assert_int_equal(freed, 0);
  assert_int_equal(gpujit_cache_limit_set(f->cache, 1, &removed, &freed), 0);
  assert_int_equal(removed, 3);
  assert_true(freed > 3 * 1000);
}

/* Stores past the limit evict the least recently used: never above it after a store. */
static void test_limit__evicts_lru(void **state)
{
  fx *f = *state;
  uint64_t one, limit, entries, got;
  const char *source;
  gpujit_module *m = build(f, 0);
  gpujit_module_free(m);
  one = cache_bytes(f, NULL);
  assert_true(one > 1000);
  limit = one * 3 + one / 2; /* room for three entries */
  assert_int_equal(gpujit_cache_limit_set(f->cache, limit, NULL, NULL), 0);
  assert_int_equal(gpujit_cache_limit_get(f->cache, &got, &source), 0);
  assert_int_equal(got, limit);
  assert_string_equal(source, "the cache's setting");
  for (int i = 1; i < 8; i++) {
    gpujit_module_free(build(f, i));
    if (i == 2) { /* use module 1 again: it becomes more recent than 2 */
      m = build(f, 1);
      assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_HIT);
      gpujit_module_free(m);
    }
    if (cache_bytes(f, &entries) > limit)
      fail_msg("after store %d: %llu bytes in the cache, limit %llu", i, (unsigned long long)cache_bytes(f, NULL),
               (unsigned long long)limit);
  }
  /* Room for three entries of the first one's size; later ones may share its shard directories
   * (the key holds the sources' paths, under a temporary directory of a new name each run), so
   * more may fit: what holds is that some were evicted and that more than one is kept (a CI run
   * under ASan kept a count outside 2-3 once). */
  if (!(entries >= 2 && entries < 8))
    fail_msg("%llu entries kept under a limit of %llu bytes (one entry: %llu)", (unsigned long long)entries,
             (unsigned long long)limit, (unsigned long long)one);
  m = build(f, 7); /* the newest stays */
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_HIT);
  gpujit_module_free(m);
  m = build(f, 0); /* the oldest went */
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS);
  gpujit_module_free(m);
  m = build(f, 6); /* the second newest stays */
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_HIT);
  gpujit_module_free(m);
}

/* The environment overrides the setting; a malformed value is an error, and builds go on. */
static void test_limit__environment(void **state)
{
  fx *f = *state;
  uint64_t got;
  const char *source;
  gpujit_module *m;
  assert_int_equal(gpujit_cache_limit_set(f->cache, 1ULL << 30, NULL, NULL), 0);
  setenv("GPUJIT_CACHE_MAX_SIZE", "1KiB", 1);
  assert_int_equal(gpujit_cache_limit_get(f->cache, &got, &source), 0);
  assert_int_equal(got, 1024);
  assert_string_equal(source, "GPUJIT_CACHE_MAX_SIZE");
  m = build(f, 0); /* bigger than the limit alone: evicted right after its store, its records too */
  gpujit_module_free(m);
  {
    uint64_t entries, left = cache_bytes(f, &entries);
    char *manifests = th_path(f->cache_dir, "manifests");
    assert_int_equal(entries, 0);
    du_total = 0;
    nftw(manifests, du_one, 16, FTW_PHYS);
    assert_true(du_total <= 4096); /* the empty directory alone */
    assert_true(left <= 20 * 4096); /* settings, counters, notes and the empty layout */
    free(manifests);
  }
  setenv("GPUJIT_CACHE_MAX_SIZE", "lots", 1);
  assert_int_equal(gpujit_cache_limit_get(f->cache, &got, NULL), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "GPUJIT_CACHE_MAX_SIZE"));
  m = build(f, 1);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS);
  gpujit_module_free(m);
}

/* An entry another process is reading (its shared lock held) is passed over by eviction. */
static void test_limit__reader_keeps_entry(void **state)
{
  fx *f = *state;
  char *dir = NULL;
  int fd;
  uint64_t removed = 0;
  gpujit_module *m = build(f, 0);
  assert_int_equal(gpujit_cache_entry_dir(&dir, f->cache, gpujit_module_cache_key(m)), 0);
  gpujit_module_free(m);
  fd = open(dir, O_RDONLY | O_DIRECTORY);
  assert_true(fd >= 0);
  assert_int_equal(flock(fd, LOCK_SH), 0);
  gpujit_module_free(build(f, 1));
  assert_int_equal(gpujit_cache_prune(f->cache, 1, 0, &removed, NULL), 0);
  assert_int_equal(removed, 1); /* module 1's entry; module 0's is being read */
  assert_true(th_exists(dir));
  close(fd);
  assert_int_equal(gpujit_cache_prune(f->cache, 1, 0, &removed, NULL), 0);
  assert_int_equal(removed, 1);
  assert_false(th_exists(dir));
  gpujit_free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_limit__parse),
    cmocka_unit_test_setup_teardown(test_limit__evicts_lru, setup, teardown),
    cmocka_unit_test_setup_teardown(test_limit__set_reports_evicted, setup, teardown),
    cmocka_unit_test_setup_teardown(test_limit__kept_setting_is_bytes, setup, teardown),
    cmocka_unit_test_setup_teardown(test_limit__environment, setup, teardown),
    cmocka_unit_test_setup_teardown(test_limit__reader_keeps_entry, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
