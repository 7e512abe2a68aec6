/* A process's own watch of a shared dependency group (cache/records/group_watch.c): the group's
 * first two lookups in a process check every record; from the third on the group is watched and
 * verified once, then vouched for — and any change made before a lookup, wherever it lies in the
 * group (a header rewritten at its size, replaced by a rename, removed, a name that must stay
 * absent created), or the group's own record replaced, is still a miss that names it. A child of
 * fork never takes its parent's events. */
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "helpers.h"

#include "cache/records/deps.h"
#include "cache/records/group_watch.h"
#include "cache/records/manifests.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "gpujit.h"

/* A made-up toolkit: DIRS directories of FILES headers each. */
#define DIRS 4
#define FILES 20
#define HEADERS (DIRS * FILES)

typedef struct fx {
  TH_CACHE_FIXTURE;
  char *tk;
  char *headers[HEADERS];
} fx;

static const char *const entry = "0123456789abcdef0123456789abcdef";
static const char *const request = "fedcba9876543210fedcba9876543210";

/* Header i's text: the same size for every version v, so only its content tells them apart. */
static void header_text(char out[64], size_t i, int v) { snprintf(out, 64, "#define W%04zu %d\n", i, v); }

static void write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state)
{
  fx *f = calloc(1, sizeof(*f));
  char dir[PATH_MAX], text[64];
  th_cache_setup(f);
  f->tk = th_path(f->root, "tk");
  mkdir(f->tk, 0755);
  for (size_t d = 0; d < DIRS; d++) {
    snprintf(dir, sizeof(dir), "%s/d%zu", f->tk, d);
    mkdir(dir, 0755);
    for (size_t k = 0; k < FILES; k++) {
      size_t i = d * FILES + k;
      f->headers[i] = malloc(PATH_MAX);
      snprintf(f->headers[i], PATH_MAX, "%s/h%03zu.h", dir, k);
      header_text(text, i, 0);
      write_file(f->headers[i], text);
    }
  }
  th_settle(f->headers[HEADERS - 1]); /* what is written from now on is stamped later */
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;
  th_cache_teardown(f);
  for (size_t i = 0; i < HEADERS; i++)
    free(f->headers[i]);
  free(f->tk);
  free(f);
  return 0;
}

/* The group of every header as it is now (each stat trusted), and a name that must stay absent;
 * stored with an entry under `request`. */
static void store_group(fx *f)
{
  gpujit__deps d = {0}, none = {0};
  char text[64], dir[PATH_MAX], *gone = th_path(f->tk, "d0/absent.h"), *out = NULL;
  int64_t later = gpujit__deps_clock() + 5000000000LL;
  for (size_t i = 0; i < HEADERS; i++) {
    header_text(text, i, 0);
    assert_int_equal(gpujit__deps_add_file(&d, f->headers[i], NULL, text, strlen(text), later), 0);
  }
  assert_int_equal(gpujit__deps_add_absent(&d, gone, NULL), 0);
  d.items[d.count - 1].trusted = true; /* as if stamped long ago */
  gpujit__cache_entry_path(dir, sizeof(dir), f->cache, entry);
  assert_int_equal(th_run(&out, "mkdir -p '%s'", dir), 0);
  free(out);
  assert_int_equal(gpujit__manifest_add(f->cache, request, NULL, entry, &none, &d), 0);
  gpujit__deps_free(&d);
  free(gone);
}

static uint64_t vouched(void)
{
  gpujit__group_watch_counts c;
  gpujit__group_watch_process_counts(&c);
  return c.vouched;
}

/* A lookup that must hit. */
static void hit(fx *f)
{
  char found[33], miss[PATH_MAX + 160] = "";
  if (gpujit__manifest_find_why(f->cache, request, NULL, found, miss, sizeof(miss)) != 0)
    fail_msg("a lookup with nothing changed missed: %s", miss);
  assert_string_equal(found, entry);
}

/* A lookup that must miss, naming `what`. */
static void miss_naming(fx *f, const char *what, const char *change)
{
  char found[33], miss[PATH_MAX + 160] = "";
  if (gpujit__manifest_find_why(f->cache, request, NULL, found, miss, sizeof(miss)) != GPUJIT_ENOENT)
    fail_msg("%s (%s), and the lookup still hit", what, change);
  if (!strstr(miss, what))
    fail_msg("%s: the reason does not name it: %s", change, miss);
}

/* The third lookup sets the watch up, the fourth and later are vouched for; every change made
 * between lookups is a miss, and the group, put back, hits again. */
static void test_group_watch__changes_still_miss(void **state)
{
  fx *f = *state;
  static const size_t at[] = {0, FILES - 1, FILES, HEADERS / 2, HEADERS - 1};
  char text[64], moved[PATH_MAX + 8], *gone = th_path(f->tk, "d0/absent.h");
  uint64_t before;
  store_group(f);
  hit(f); /* the first two checks in the process: every record stat'ed */
  hit(f);
  assert_int_equal(vouched(), 0);
  hit(f); /* the third: watched, verified */
  if (vouched() == 0) {
    print_message("skip: this process's watch vouches for nothing here (no inotify, or a filesystem it cannot trust)\n");
    skip();
  }
  before = vouched();
  hit(f);
  hit(f);
  assert_int_equal(vouched(), before + 2);
  for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
    size_t i = at[k];
    header_text(text, i, 1); /* rewritten in place, the same size */
    write_file(f->headers[i], text);
    miss_naming(f, f->headers[i], "rewritten");
    header_text(text, i, 0);
    write_file(f->headers[i], text);
    hit(f); /* content as recorded: a hit, its new stat taken */
    hit(f);
    snprintf(moved, sizeof(moved), "%s.new", f->headers[i]); /* replaced by a rename */
    header_text(text, i, 2);
    write_file(moved, text);
    assert_int_equal(rename(moved, f->headers[i]), 0);
    miss_naming(f, f->headers[i], "renamed over");
    assert_int_equal(unlink(f->headers[i]), 0); /* removed */
    miss_naming(f, f->headers[i], "removed");
    header_text(text, i, 0);
    write_file(f->headers[i], text);
    hit(f);
  }
  before = vouched();
  for (int k = 0; k < 70 && vouched() == before; k++) /* failed vouches wait 1, 2, 4 … checks */
    hit(f);
  assert_true(vouched() > before); /* vouched for again after the changes */
  write_file(gone, "#define GONE 1\n"); /* a name that must stay absent */
  miss_naming(f, f->tk, "an absent name created");
  assert_int_equal(unlink(gone), 0);
  hit(f);
  hit(f);
  free(gone);
}

/* The group's own record replaced while the watch holds it (here by a form earlier versions wrote,
 * which is not read): the lookup reads it again, as one without the watch would — a miss that
 * says so — and the build that stores the group again makes it hit. */
static void test_group_watch__record_replaced(void **state)
{
  fx *f = *state;
  char found[33], miss[512] = "", *path = NULL;
  store_group(f);
  hit(f);
  hit(f);
  hit(f);
  if (vouched() == 0) {
    print_message("skip: this process's watch vouches for nothing here\n");
    skip();
  }
  assert_int_equal(th_run(&path, "printf %%s \"$(ls '%s'/deps/*/*)\"", f->cache_dir), 0);
  assert_int_equal(gpujit__write_blob(f->cache_dir, path, "gpujit-deps-2", "f 1 - - - 0 /y\n", 15), 0);
  assert_int_equal(gpujit__manifest_find_why(f->cache, request, NULL, found, miss, sizeof(miss)), GPUJIT_ENOENT);
  if (!strstr(miss, "an earlier form (gpujit-deps-2"))
    fail_msg("miss reason: %s", miss);
  store_group(f);
  hit(f);
  free(path);
}

/* A child of fork checks for itself, and leaves its parent's events to its parent: a header the
 * child changes is a miss in the child and, after it, in the parent. */
static void test_group_watch__fork_child_leaves_parent_events(void **state)
{
  fx *f = *state;
  char text[64];
  int status;
  pid_t pid;
  store_group(f);
  hit(f);
  hit(f);
  hit(f);
  if (vouched() == 0) {
    print_message("skip: this process's watch vouches for nothing here\n");
    skip();
  }
  if ((pid = fork()) == 0) {
    char found[33];
    gpujit__group_watch_counts c;
    int bad = 0;
    header_text(text, 3, 7);
    write_file(f->headers[3], text);
    bad |= gpujit__manifest_find(f->cache, request, found) != GPUJIT_ENOENT;
    gpujit__group_watch_process_counts(&c);
    bad |= c.asked != 0 ? 2 : 0; /* the parent's watch is not the child's */
    _exit(bad);
  }
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  miss_naming(f, f->headers[3], "changed by a child");
  header_text(text, 3, 0);
  write_file(f->headers[3], text);
  hit(f);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_group_watch__changes_still_miss, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group_watch__record_replaced, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group_watch__fork_child_leaves_parent_events, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
