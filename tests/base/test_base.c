/* The helpers every folder shares (src/base): arrays grown, trees removed, the default cache
 * directory worked out in one place. */
#include "helpers.h"

#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "gpujit.h"

static void test_base__grow(void **state)
{
  int *a = NULL, *g;
  size_t cap = 0;
  (void)state;
  assert_non_null(a = gpujit__grow(a, &cap, 0, sizeof(*a), 4)); /* empty: the first capacity */
  assert_int_equal(cap, 4);
  assert_ptr_equal(gpujit__grow(a, &cap, 3, sizeof(*a), 4), a); /* room left: unchanged */
  assert_non_null(a = gpujit__grow(a, &cap, 4, sizeof(*a), 4)); /* full: doubled */
  assert_int_equal(cap, 8);
  assert_non_null(a = gpujit__grow_to(a, &cap, 33, sizeof(*a), 4)); /* doubled until it holds 33 */
  assert_int_equal(cap, 64);
  a[63] = 1;
  g = gpujit__grow_to(a, &cap, SIZE_MAX / 2, sizeof(*a), 4); /* too big: refused, untouched */
  assert_null(g);
  assert_non_null(strstr(gpujit_error_last(), "out of memory"));
  assert_int_equal(cap, 64);
  assert_int_equal(a[63], 1);
  assert_null(gpujit__grow(a, &cap, SIZE_MAX, sizeof(*a), 4));
  free(a);
}

/* rm -rf: everything beneath, a symlink removed and never followed; nothing there is no error. */
static void test_base__rmrf(void **state)
{
  char *root = th_tmpdir(), *keep = th_tmpdir(), *tree = th_path(root, "t"), *sub = th_path(root, "t/a/b");
  char *kept = th_write(keep, "kept", "x"), *link = th_path(root, "t/a/link");
  (void)state;
  assert_int_equal(gpujit__mkdirs(sub, 0700), 0);
  free(th_write(sub, "f", "x"));
  assert_int_equal(symlink(keep, link), 0);
  assert_int_equal(gpujit__rmrf(tree), 0);
  assert_false(gpujit__exists(tree));
  assert_true(gpujit__exists(kept)); /* the link's target stays */
  assert_int_equal(gpujit__rmrf(tree), 0);
  th_rmrf(root), th_rmrf(keep);
  free(root), free(keep), free(tree), free(sub), free(kept), free(link);
}

/* $GPUJIT_CACHE_DIR, else $XDG_CACHE_HOME/gpujit, else ~/.cache/gpujit: absolute, with where it
 * came from (what `gpujit env` and `gpujit cache config` say). */
static void test_base__default_cache_dir(void **state)
{
  const char *origin = NULL;
  char *d, cwd[4096];
  (void)state;
  assert_non_null(getcwd(cwd, sizeof(cwd)));
  setenv("GPUJIT_CACHE_DIR", "rel/c", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  d = gpujit__cache_default_dir(&origin);
  assert_string_equal(origin, "GPUJIT_CACHE_DIR");
  assert_int_equal(d[0], '/');
  assert_non_null(strstr(d, "/rel/c"));
  free(d);
  setenv("GPUJIT_CACHE_DIR", "", 1); /* empty: unset */
  d = gpujit__cache_default_dir(&origin);
  assert_string_equal(origin, "XDG_CACHE_HOME");
  assert_string_equal(d, "/x/gpujit");
  free(d);
  unsetenv("XDG_CACHE_HOME");
  d = gpujit__cache_default_dir(NULL);
  assert_string_equal(d, "/h/.cache/gpujit");
  free(d);
  assert_int_equal(gpujit_cache_default_dir(&d, &origin), 0); /* the public API says the same */
  assert_string_equal(origin, "HOME");
  assert_string_equal(d, "/h/.cache/gpujit");
  gpujit_free(d);
}

/* Context added to the last message, which is the buffer being written: formatting into it
 * directly overwrote the message's start before reading it ("X: X: h 'sm_0'"). */
static void test_base__error_context_of_the_last_message(void **state)
{
  char longer[900];
  (void)state;
  gpujit__error(GPUJIT_EINVAL, "invalid size '%s': expected a number with K, M, G or T", "1Q");
  assert_int_equal(gpujit__error(GPUJIT_EINVAL, "GPUJIT_CACHE_MAX_SIZE: %s", gpujit_error_last()), GPUJIT_EINVAL);
  assert_string_equal(gpujit_error_last(),
                      "GPUJIT_CACHE_MAX_SIZE: invalid size '1Q': expected a number with K, M, G or T");
  gpujit__error(GPUJIT_EIO, "%s: %s", gpujit_error_last(), gpujit_error_last()); /* the message twice, read whole */
  assert_string_equal(gpujit_error_last(),
                      "GPUJIT_CACHE_MAX_SIZE: invalid size '1Q': expected a number with K, M, G or T: "
                      "GPUJIT_CACHE_MAX_SIZE: invalid size '1Q': expected a number with K, M, G or T");
  memset(longer, 'x', sizeof(longer) - 1), longer[sizeof(longer) - 1] = '\0';
  gpujit__error(GPUJIT_EIO, "%s", longer);
  gpujit__error(GPUJIT_EIO, "ctx: %s", gpujit_error_last()); /* cut at the buffer's end, never past it */
  assert_int_equal(strncmp(gpujit_error_last(), "ctx: xxx", 8), 0);
  assert_int_equal(strlen(gpujit_error_last()), 5 + sizeof(longer) - 1);
  gpujit_error_clear();
}

/* The UTF-8 the profile's CSV, page and JSON keep, and what they replace. */
static void test_base__utf8_len(void **state)
{
  (void)state;
  assert_int_equal(gpujit__utf8_len("a", 1), 1);
  assert_int_equal(gpujit__utf8_len("\xc3\xa9", 2), 2);
  assert_int_equal(gpujit__utf8_len("\xe2\x80\xa8", 3), 3);
  assert_int_equal(gpujit__utf8_len("\xf0\x9f\x98\x80", 4), 4);
  assert_int_equal(gpujit__utf8_len("\xc3\xa9", 1), 0);         /* cut */
  assert_int_equal(gpujit__utf8_len("\xff", 1), 0);              /* never UTF-8 */
  assert_int_equal(gpujit__utf8_len("\xa9", 1), 0);              /* a lone continuation */
  assert_int_equal(gpujit__utf8_len("\xc0\xaf", 2), 0);         /* overlong '/' */
  assert_int_equal(gpujit__utf8_len("\xe0\x80\xaf", 3), 0);     /* overlong */
  assert_int_equal(gpujit__utf8_len("\xed\xa0\x80", 3), 0);     /* a surrogate */
  assert_int_equal(gpujit__utf8_len("\xf4\x90\x80\x80", 4), 0); /* past U+10FFFF */
  assert_int_equal(gpujit__utf8_len("\xe2\x28\xa1", 3), 0);     /* not a continuation */
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_base__grow),
      cmocka_unit_test(test_base__rmrf),
      cmocka_unit_test(test_base__default_cache_dir),
      cmocka_unit_test(test_base__error_context_of_the_last_message),
      cmocka_unit_test(test_base__utf8_len),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
