/* What a miss's record of NVRTC's probes costs in system calls: each header read once (opened,
 * its fstat, one read, closed, one stat after — no stat before, no flags cleared, no read to find
 * an end the size already gave, no third stat), each missing directory stat'ed once for all the
 * probes under it, and the leading directories a search path shares not stat'ed again per probe.
 * A CUB miss makes ~610 header reads and ~660 absent probes: what these counts save was most of
 * the system calls a miss added to an uncached compile (docs/cache-format.md). The record made is
 * checked too: every header hashed by its content, the absences grouped by directory. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "helpers.h"

#include "base/buf.h"
#include "base/fs.h"
#include "base/hash.h"
#include "compile/observe/observe.h"
#include "module/deps.h"

enum { HEADERS = 32, ABSENT = 32 };

/* ---- the file system calls the library makes, counted while `counting` ---------------------- */

static int counting;
static int calls;

#define NEXT(name, type) ((type)dlsym(RTLD_NEXT, name))

int stat(const char *restrict path, struct stat *restrict st)
{
  calls += counting;
  return NEXT("stat", int (*)(const char *, struct stat *))(path, st);
}

int lstat(const char *restrict path, struct stat *restrict st)
{
  calls += counting;
  return NEXT("lstat", int (*)(const char *, struct stat *))(path, st);
}

int fstat(int fd, struct stat *st)
{
  calls += counting;
  return NEXT("fstat", int (*)(int, struct stat *))(fd, st);
}

int open(const char *path, int flags, ...)
{
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = (mode_t)va_arg(ap, int);
    va_end(ap);
  }
  calls += counting;
  return NEXT("open", int (*)(const char *, int, ...))(path, flags, mode);
}

ssize_t read(int fd, void *buf, size_t n)
{
  calls += counting;
  return NEXT("read", ssize_t (*)(int, void *, size_t))(fd, buf, n);
}

int fcntl(int fd, int cmd, ...)
{
  va_list ap;
  void *arg;
  va_start(ap, cmd);
  arg = va_arg(ap, void *);
  va_end(ap);
  calls += counting;
  return NEXT("fcntl", int (*)(int, int, ...))(fd, cmd, arg);
}

pid_t getpid(void)
{
  calls += counting;
  return NEXT("getpid", pid_t (*)(void))();
}

/* ---- the scene: a header directory, a missing one on the search path -------------------------- */

static gpujit__probe probe(const char *path, gpujit__probe_kind kind, int64_t seen)
{
  gpujit__probe p = {.kind = kind, .read = kind == GPUJIT__PROBE_FILE, .seen_ns = seen};
  struct stat st;
  assert_non_null(p.path = strdup(path));
  if (kind == GPUJIT__PROBE_FILE) {
    assert_int_equal(stat(path, &st), 0);
    p.dev = (uint64_t)st.st_dev, p.ino = (uint64_t)st.st_ino, p.size = (uint64_t)st.st_size;
    p.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    p.ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
  }
  return p;
}

static void test_miss_record__system_calls_per_probe(void **state)
{
  (void)state;
  char dir[] = "/tmp/gj-miss-record-XXXXXX", path[PATH_MAX], text[64], hash[33], why[512] = "";
  struct timeval old[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
  gpujit__observed o = {0};
  gpujit__observed_deps rec;
  /* NVRTC looked after every header's ctime (the files were made just now) */
  int64_t seen = gpujit__deps_coarse_clock() + 2000000000LL;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/inc", dir);
  assert_int_equal(mkdir(path, 0700), 0);
  assert_non_null(o.items = calloc(HEADERS + 2 * ABSENT, sizeof(*o.items)));
  for (int i = 0; i < HEADERS; i++) {
    FILE *f;
    snprintf(path, sizeof(path), "%s/inc/h%02d.h", dir, i);
    snprintf(text, sizeof(text), "#define H%02d %d\n", i, i);
    assert_non_null(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
    assert_int_equal(utimes(path, old), 0);
    o.items[o.count++] = probe(path, GPUJIT__PROBE_FILE, seen);
  }
  for (int i = 0; i < ABSENT; i++) { /* <cuda/std/...> looked for in a directory with no cuda/ */
    snprintf(path, sizeof(path), "%s/miss/cuda/std/x%02d.h", dir, i);
    o.items[o.count++] = probe(path, GPUJIT__PROBE_ABSENT, seen);
    snprintf(path, sizeof(path), "%s/inc/x%02d.h", dir, i); /* and in the one that holds the headers */
    o.items[o.count++] = probe(path, GPUJIT__PROBE_ABSENT, seen);
  }

  (void)gpujit__in_toolkit(dir); /* the toolkit's root found once a process: not counted */
  counting = 1;
  assert_int_equal(gpujit__module_deps_observed(&rec, &o, NULL, seen, NULL, 0, false, why, sizeof(why)), 0);
  counting = 0;
  assert_string_equal(why, "");

  /* the record: every header read and hashed by its content; two directories vouch for the
   * absences (miss/ missing from the top directory, the x*.h names from inc/) */
  assert_int_equal(rec.count, HEADERS);
  assert_int_equal(rec.deps.count, HEADERS + 2);
  for (size_t i = 0; i < rec.deps.count; i++) {
    const gpujit__dep *e = &rec.deps.items[i];
    int k;
    if (e->absent) {
      assert_true(!strcmp(e->names, "miss/") || strlen(e->names) == ABSENT * strlen("x00.h/"));
      continue;
    }
    assert_int_equal(sscanf(strrchr(e->path, '/'), "/h%d.h", &k), 1);
    snprintf(text, sizeof(text), "#define H%02d %d\n", k, k);
    gpujit__hash_hex(hash, text, strlen(text));
    assert_string_equal(e->hash, hash);
    assert_true(e->trusted);
  }

  /* a header: open, fstat, read, stat after (close is not counted) — 4; an absent probe under
   * inc/: its own stat and the name's lstat — 2; under miss/: none but the first's walk down to
   * the missing directory. Before: 9 a header (a stat before, two fcntl, a read of the end, a
   * third stat) and 6-8 an absent probe (getpid, a stat of every leading directory, the path's):
   * 643 here. */
  printf("system calls: %d for %d headers and %d absent probes\n", calls, HEADERS, 2 * ABSENT);
  assert_true(calls <= 4 * HEADERS + 2 * ABSENT + 24);

  gpujit__observed_deps_free(&rec);
  gpujit__observed_free(&o);
  {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
  }
}

/* What a header read for the record names, as the one-pass searches find it (whole identifiers
 * found by a byte all the names hold; the pieces a paste could join): the answers of the searches
 * per name they replaced. */
static const char *cacheable_why(const char *text)
{
  static char why[512];
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_source src = {.data = "int x;\n", .size = 7};
  const char *paths[] = {"/src/k.cu"};
  gpujit__read_file f = {.path = (char *)"/inc/h.h", .data = {.data = (char *)text, .len = strlen(text)}};
  gpujit__observed_deps d = {.files = &f, .count = 1};
  why[0] = '\0';
  if (gpujit__module_cacheable(&o, &src, paths, 1, &d, why, sizeof(why)))
    return "";
  return strstr(why, "uses ") ? strstr(why, "uses ") + 5 : why;
}

static const char *own_path(const char *text)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_source src = {.data = "int x;\n", .size = 7};
  gpujit__read_file f = {.path = (char *)"/inc/h.h", .data = {.data = (char *)text, .len = strlen(text)}};
  gpujit__observed_deps d = {.files = &f, .count = 1};
  const char *m = gpujit__names_own_path(&o, &src, 1, &d);
  return m ? m : "";
}

static void test_miss_record__names_a_header_uses(void **state)
{
  (void)state;
  assert_string_equal(cacheable_why("const char *t = __TIME__;\n"), "__TIME__ (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)");
  assert_string_equal(cacheable_why("__DATE__"), "__DATE__ (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)");
  assert_string_equal(cacheable_why("x(__TIMESTAMP__)"), "__TIMESTAMP__ (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)");
  /* the first name of the list wins, wherever it stands */
  assert_string_equal(cacheable_why("__DATE__ __TIME__"), "__TIME__ (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)");
  /* inside a longer identifier: no use */
  assert_string_equal(cacheable_why("int my__TIME__; int __DATE__x; int T__TIMESTAMP__;"), "");
  assert_string_equal(cacheable_why("TTTT __TIM E__ __DATE_ _DATE__"), "");
  /* pieces a paste joins: only where the text pastes */
  assert_string_equal(cacheable_why("#define J(a, b) a##b\nJ(__TI, ME__)\n"),
                      "__TIME__ (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)");
  assert_string_equal(cacheable_why("#define J(a) a\nJ(__TI)\n"), "");
  assert_string_equal(cacheable_why("#define J(a, b) a##b\nJ(x, TAMP__)\n"),
                      "__TIMESTAMP__ (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)");
  assert_string_equal(cacheable_why("#define J(a, b) a##b\nJ(__, X)\n"), "");
  assert_string_equal(own_path("std::source_location l;"), "source_location");
  assert_string_equal(own_path("#define F(a) __FI##a\n"), "__FILE__");
  assert_string_equal(own_path("int __FILE_NAMES__;"), "");
  assert_string_equal(own_path("p = __builtin_FILE_NAME();"), "__builtin_FILE_NAME");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_miss_record__system_calls_per_probe),
    cmocka_unit_test(test_miss_record__names_a_header_uses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
