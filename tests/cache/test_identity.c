/* A file's identity in the cache's records: the device with the inode wherever a stat is compared
 * (another filesystem can hold a file of equal inode, size and times), and which files were one
 * file — compared only where `#pragma once` can see it, across an entry's records and its shared
 * group. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "helpers.h"

#include "base/buf.h"
#include "base/fs.h"
#include "cache/records/deps.h"
#include "cache/store/handle.h"
#include "cache/records/manifests.h"
#include "gpujit.h"

#define LATER (gpujit__deps_clock() + 5000000000LL) /* a read this late trusts every stamp */

static const char *const entry = "0123456789abcdef0123456789abcdef";
static const char *const request = "fedcba9876543210fedcba9876543210";

static const char once_h[] = "#pragma once\n#define O 1\n";
static const char guard_h[] = "#ifndef G_H\n#define G_H 1\n#endif\n";

typedef struct fx {
  TH_CACHE_FIXTURE;
} fx;

static int setup(void **state)
{
  fx *f = calloc(1, sizeof(*f));
  th_cache_setup(f);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;
  th_cache_teardown(f);
  free(f);
  return 0;
}

/* `path` made a copy of itself: the same content, another inode. */
static void unlink_to_copy(const char *path)
{
  char tmp[PATH_MAX];
  gpujit__buf b = {0};
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE *w;
  assert_int_equal(gpujit__file_read(&b, path), 0);
  assert_non_null(w = fopen(tmp, "wb"));
  assert_int_equal(fwrite(b.data, 1, b.len, w), b.len);
  fclose(w);
  assert_int_equal(rename(tmp, path), 0);
  gpujit__buf_free(&b);
}

/* A file on another filesystem with the same inode, size and times as the one recorded: the
 * device tells them apart, so its content decides — another content is a miss (in memory and where
 * a group's binary records lie), the same content a hit. */
static void test_identity__device_compared_with_inode(void **state)
{
  fx *f = *state;
  char *h = th_write(f->root, "h.h", "#define V 2\n");
  struct stat st;
  bool refresh;
  for (int same = 0; same < 2; same++) {
    gpujit__deps d = {0};
    gpujit__buf bin = {0};
    gpujit__deps_view v;
    /* recorded with another content (same > 0: this one) and another device */
    assert_int_equal(gpujit__deps_add_file(&d, h, NULL, same ? "#define V 2\n" : "#define V 1\n", 12, LATER), 0);
    assert_int_equal(stat(h, &st), 0);
    assert_true(d.items[0].trusted);
    assert_int_equal(d.items[0].dev, (uint64_t)st.st_dev);
    d.items[0].dev = (uint64_t)st.st_dev + 1;
    assert_int_equal(gpujit__deps_to_bin(&d, &bin), 0);
    assert_int_equal(gpujit__deps_view_open(&v, bin.data, bin.len), 0);
    {
      gpujit__buf copy = {0};
      assert_int_equal(gpujit__buf_put(&copy, bin.data, bin.len), 0);
      assert_int_equal(gpujit__deps_verify_view(&v, &copy), GPUJIT_ENOENT); /* not exactly as recorded */
    }
    assert_int_equal(gpujit__deps_verify(&d, &refresh), same ? 0 : GPUJIT_ENOENT);
    gpujit__buf_free(&bin);
    gpujit__deps_free(&d);
  }
  free(h);
}

/* The same in a manifest's JSON: the device is written and read back, and compared. */
static void test_identity__device_in_json(void **state)
{
  fx *f = *state;
  char *h = th_write(f->root, "j.h", "#define V 2\n");
  gpujit__deps d = {0}, back;
  struct stat st;
  bool refresh;
  cJSON *j;
  assert_int_equal(gpujit__deps_add_file(&d, h, NULL, "#define V 1\n", 12, LATER), 0);
  assert_int_equal(stat(h, &st), 0);
  d.items[0].dev = (uint64_t)st.st_dev + 7;
  assert_non_null(j = gpujit__deps_to_json(&d));
  assert_int_equal(gpujit__deps_from_json(&back, j, NULL), 0);
  assert_true(back.items[0].trusted);
  assert_int_equal(back.items[0].dev, (uint64_t)st.st_dev + 7);
  assert_int_equal(back.items[0].ino, (uint64_t)st.st_ino);
  assert_int_equal(gpujit__deps_verify(&back, &refresh), GPUJIT_ENOENT);
  cJSON_Delete(j);
  gpujit__deps_free(&d);
  gpujit__deps_free(&back);
  free(h);
}

/* What makes a file's identity matter: `once` named outside comments; a #define that names it. */
static void test_identity__scan_once(void **state)
{
  static const struct {
    const char *text;
    bool once, defines;
  } cases[] = {
      {"#pragma once\n", true, false},
      {"  #  pragma   once // why\n", true, false},
      {"_Pragma(\"once\")\n", true, false},
      {"#define ONCE _Pragma(\"once\")\n", true, true},
      /* a _Pragma whose operand the preprocessor makes may make `once` by pasting, in any file
       * that expands the macro */
      {"#define P(x) \\\n  _Pragma(#x)\nP(once)\n", true, true},
      {"#define CAT(a, b) a##b\n#define S(x) #x\n#define XS(x) S(x)\n_Pragma(XS(CAT(on, ce)))\n", true, false},
      {"#define PRAGMA(x) _Pragma(x)\n", true, true},
      {"#define P _Pragma\n", true, true},
      {"_Pragma ( u8\"unroll\" ) int x;\n", false, false},
      {"#define UNROLL _Pragma(\"unroll\")\n", false, false},
      {"#define ONCE \\\n  _Pragma(\"once\")\n", true, true},
      {"#ifndef G\n#define G\n#endif\n", false, false},
      {"// included once\n/* only once,\n once */ int x;\n", false, false},
      {"int onceler; int x_once;\n", false, false},
      {"#pragma unroll\n", false, false},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    bool defines = !cases[i].defines;
    if (gpujit__deps_scan_once(cases[i].text, strlen(cases[i].text), &defines) != cases[i].once ||
        defines != cases[i].defines)
      fail_msg("case %zu: %s", i, cases[i].text);
  }
}

/* Records of `u` (the user's) and `t` (the toolkit's, a shared group) numbered as a build does. */
static void record(gpujit__deps *deps, gpujit__deps *shared, const char *u, const char *t, const char *text)
{
  memset(deps, 0, sizeof(*deps));
  memset(shared, 0, sizeof(*shared));
  assert_int_equal(gpujit__deps_add_file(deps, u, NULL, text, strlen(text), LATER), 0);
  assert_int_equal(gpujit__deps_add_file(shared, t, NULL, text, strlen(text), LATER), 0);
  assert_int_equal(gpujit__deps_identities(deps, shared), 0);
}

/* A user header with #pragma once that is a hard link of a toolkit header names it; made a copy
 * (or, recorded as a copy, made a link) its identities no longer hold across the two. A header
 * with include guards is no `once` file: neither numbered nor compared, link or copy. */
static void test_identity__across_entry_and_group(void **state)
{
  fx *f = *state;
  char *t = th_write(f->root, "tk_once.h", once_h), *u = th_path(f->root, "u_once.h");
  char *tg = th_write(f->root, "tk_guard.h", guard_h), *ug = th_path(f->root, "u_guard.h");
  gpujit__deps deps, shared;
  assert_int_equal(link(t, u), 0);
  assert_int_equal(link(tg, ug), 0);
  /* once: linked, then a copy */
  record(&deps, &shared, u, t, once_h);
  assert_true(deps.items[0].once && shared.items[0].once);
  assert_non_null(deps.items[0].with);
  assert_string_equal(deps.items[0].with, shared.items[0].rel);
  assert_int_equal(gpujit__deps_stat_identities(&deps), 0);
  assert_int_equal(gpujit__deps_stat_identities(&shared), 0);
  assert_int_equal(gpujit__deps_identities_hold(&deps, &shared), 0);
  unlink_to_copy(u);
  assert_int_equal(gpujit__deps_stat_identities(&deps), 0);
  assert_int_equal(gpujit__deps_identities_hold(&deps, &shared), GPUJIT_ENOENT);
  gpujit__deps_free(&deps);
  gpujit__deps_free(&shared);
  /* once: a copy, then linked */
  record(&deps, &shared, u, t, once_h);
  assert_null(deps.items[0].with);
  assert_int_equal(unlink(u), 0);
  assert_int_equal(link(t, u), 0);
  assert_int_equal(gpujit__deps_stat_identities(&deps), 0);
  assert_int_equal(gpujit__deps_identities_hold(&deps, &shared), GPUJIT_ENOENT);
  gpujit__deps_free(&deps);
  gpujit__deps_free(&shared);
  /* include guards: linked, then a copy — nothing to compare */
  record(&deps, &shared, ug, tg, guard_h);
  assert_false(deps.items[0].once || shared.items[0].once);
  assert_null(deps.items[0].with);
  unlink_to_copy(ug);
  assert_int_equal(gpujit__deps_stat_identities(&deps), 0);
  assert_int_equal(gpujit__deps_identities_hold(&deps, &shared), 0);
  gpujit__deps_free(&deps);
  gpujit__deps_free(&shared);
  free(t), free(u), free(tg), free(ug);
}

/* Within one record set: two hard links with #pragma once that become copies no longer hold;
 * two with include guards still do. */
static void test_identity__within_entry(void **state)
{
  fx *f = *state;
  const char *texts[] = {once_h, guard_h};
  for (int k = 0; k < 2; k++) {
    char na[32], nb[32];
    snprintf(na, sizeof(na), "w%d_a.h", k);
    snprintf(nb, sizeof(nb), "w%d_b.h", k);
    char *a = th_write(f->root, na, texts[k]), *b = th_path(f->root, nb);
    gpujit__deps d = {0};
    bool refresh;
    assert_int_equal(link(a, b), 0);
    assert_int_equal(gpujit__deps_add_file(&d, a, NULL, texts[k], strlen(texts[k]), LATER), 0);
    assert_int_equal(gpujit__deps_add_file(&d, b, NULL, texts[k], strlen(texts[k]), LATER), 0);
    assert_int_equal(gpujit__deps_identities(&d, NULL), 0);
    assert_int_equal(d.items[0].same, k == 0 ? 1u : 0u);
    assert_int_equal(d.items[1].same, d.items[0].same);
    assert_int_equal(gpujit__deps_verify(&d, &refresh), 0);
    unlink_to_copy(b);
    assert_int_equal(gpujit__deps_verify(&d, &refresh), k == 0 ? GPUJIT_ENOENT : 0);
    gpujit__deps_free(&d);
    free(a), free(b);
  }
}

/* An LTO module's sources are separate programs: `#pragma once` files of one identity read by
 * different programs are no class (a link that becomes a copy, or the reverse, holds); where one
 * program reads both, directly or through a file every program reads, they are one, as before.
 * The programs are written and read back with the record. */
static void test_identity__lto_programs_apart(void **state)
{
  fx *f = *state;
  char *a = th_write(f->root, "p_a.h", once_h), *b = th_path(f->root, "p_b.h"), *c = th_path(f->root, "p_c.h");
  gpujit__deps d = {0}, back = {0};
  cJSON *j;
  assert_int_equal(link(a, b), 0);
  assert_int_equal(gpujit__deps_add_file(&d, a, NULL, once_h, strlen(once_h), LATER), 0);
  assert_int_equal(gpujit__deps_add_file(&d, b, NULL, once_h, strlen(once_h), LATER), 0);
  d.items[0].programs = 1; /* source 0 */
  d.items[1].programs = 2; /* source 1 */
  assert_int_equal(gpujit__deps_identities(&d, NULL), 0);
  assert_int_equal(d.items[0].same, 0);
  assert_int_equal(d.items[1].same, 0);
  assert_non_null(j = gpujit__deps_to_json(&d));
  assert_int_equal(gpujit__deps_from_json(&back, j, NULL), 0);
  cJSON_Delete(j);
  assert_int_equal(back.items[0].programs, 1);
  assert_int_equal(back.items[1].programs, 2);
  assert_int_equal(gpujit__deps_stat_identities(&back), 0);
  assert_int_equal(gpujit__deps_identities_hold(&back, NULL), 0);
  unlink_to_copy(b); /* no longer one file: each program still sees one header */
  assert_int_equal(gpujit__deps_stat_identities(&back), 0);
  assert_int_equal(gpujit__deps_identities_hold(&back, NULL), 0);
  assert_int_equal(unlink(b), 0); /* and one again */
  assert_int_equal(link(a, b), 0);
  assert_int_equal(gpujit__deps_stat_identities(&back), 0);
  assert_int_equal(gpujit__deps_identities_hold(&back, NULL), 0);
  gpujit__deps_free(&back);
  /* a third, read by both programs: the three are one class to them */
  assert_int_equal(link(a, c), 0);
  assert_int_equal(gpujit__deps_add_file(&d, c, NULL, once_h, strlen(once_h), LATER), 0);
  d.items[2].programs = 3;
  assert_int_equal(gpujit__deps_identities(&d, NULL), 0);
  assert_int_equal(d.items[0].same, 1);
  assert_int_equal(d.items[1].same, 1);
  assert_int_equal(d.items[2].same, 1);
  assert_int_equal(gpujit__deps_stat_identities(&d), 0);
  assert_int_equal(gpujit__deps_identities_hold(&d, NULL), 0);
  unlink_to_copy(b);
  assert_int_equal(gpujit__deps_stat_identities(&d), 0);
  assert_int_equal(gpujit__deps_identities_hold(&d, NULL), GPUJIT_ENOENT);
  /* recorded apart, then one program's two files made one: a miss */
  d.items[2].programs = 2;
  assert_int_equal(gpujit__deps_identities(&d, NULL), 0); /* a, c one file (programs 1, 2); b (2) apart */
  assert_int_equal(unlink(b), 0);
  assert_int_equal(link(a, b), 0);
  assert_int_equal(gpujit__deps_stat_identities(&d), 0);
  assert_int_equal(gpujit__deps_identities_hold(&d, NULL), GPUJIT_ENOENT);
  gpujit__deps_free(&d);
  free(a), free(b), free(c);
}

/* Through the manifest: a user header recorded as a hard link of a toolkit header is a hit while
 * it is one, a miss once a copy; recorded as a copy, a miss once made a link. The toolkit's side
 * moving is seen as well: the toolkit header replaced by a link to the user's copy is a miss, on
 * the lookup that finds the group's record not as recorded and on every later one. */
static void test_identity__manifest_across(void **state)
{
  fx *f = *state;
  char *t = th_write(f->root, "m_tk.h", once_h), *u = th_path(f->root, "m_u.h"), dir[PATH_MAX], found[33];
  char *out = NULL;
  gpujit__deps deps, shared;
  gpujit__cache_entry_path(dir, sizeof(dir), f->cache, entry);
  assert_int_equal(th_run(&out, "mkdir -p '%s'", dir), 0);
  free(out);
  assert_int_equal(link(t, u), 0);
  record(&deps, &shared, u, t, once_h);
  assert_int_equal(gpujit__manifest_add(f->cache, request, NULL, entry, &deps, &shared), 0);
  gpujit__deps_free(&deps);
  gpujit__deps_free(&shared);
  assert_int_equal(gpujit__manifest_find(f->cache, request, found), 0);
  unlink_to_copy(u);
  assert_int_equal(gpujit__manifest_find(f->cache, request, found), GPUJIT_ENOENT);
  /* recorded as copies */
  record(&deps, &shared, u, t, once_h);
  assert_int_equal(gpujit__manifest_add(f->cache, request, NULL, entry, &deps, &shared), 0);
  gpujit__deps_free(&deps);
  gpujit__deps_free(&shared);
  assert_int_equal(gpujit__manifest_find(f->cache, request, found), 0);
  /* the toolkit's header becomes a link to the user's (the same content) */
  {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.tmp", t);
    assert_int_equal(link(u, tmp), 0);
    assert_int_equal(rename(tmp, t), 0);
  }
  assert_int_equal(gpujit__manifest_find(f->cache, request, found), GPUJIT_ENOENT);
  sleep(2); /* the group's record may now take the new stat (old enough): still a miss */
  assert_int_equal(gpujit__manifest_find(f->cache, request, found), GPUJIT_ENOENT);
  assert_int_equal(gpujit__manifest_find(f->cache, request, found), GPUJIT_ENOENT);
  free(t), free(u);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_identity__device_compared_with_inode, setup, teardown),
      cmocka_unit_test_setup_teardown(test_identity__device_in_json, setup, teardown),
      cmocka_unit_test_setup_teardown(test_identity__scan_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_identity__across_entry_and_group, setup, teardown),
      cmocka_unit_test_setup_teardown(test_identity__within_entry, setup, teardown),
      cmocka_unit_test_setup_teardown(test_identity__lto_programs_apart, setup, teardown),
      cmocka_unit_test_setup_teardown(test_identity__manifest_across, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
