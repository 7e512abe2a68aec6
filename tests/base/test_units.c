/* Sizes and ages as ccache spells them (base/units.c): every unit, and bad input refused with a
 * message naming it. A bare number is GiB: `gpujit cache -M 5` once set 5 bytes and emptied the
 * cache of anyone who typed it as they type `ccache -M 5`. */
#include "helpers.h"
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "base/units.h"
#include "gpujit.h"

static uint64_t size_of(const char *text)
{
  uint64_t v = 12345;
  if (gpujit__parse_size(text, &v) != 0)
    fail_msg("'%s' refused: %s", text, gpujit_error_last());
  return v;
}

static void test_units__bare_number_is_gib(void **state)
{
  (void)state;
  assert_int_equal(size_of("5"), 5ULL << 30);
  assert_int_equal(size_of("1.5"), 3ULL << 29);
  assert_int_equal(size_of("0"), 0);
  assert_int_equal(size_of("none"), 0);
  assert_int_equal(size_of("4096B"), 4096);
}

static void test_units__decimal_units(void **state)
{
  (void)state;
  assert_int_equal(size_of("1k"), 1000);
  assert_int_equal(size_of("1K"), 1000);
  assert_int_equal(size_of("1kB"), 1000);
  assert_int_equal(size_of("1KB"), 1000);
  assert_int_equal(size_of("500M"), 500000000ULL);
  assert_int_equal(size_of("500MB"), 500000000ULL);
  assert_int_equal(size_of("2G"), 2000000000ULL);
  assert_int_equal(size_of("2GB"), 2000000000ULL);
  assert_int_equal(size_of("3T"), 3000000000000ULL);
  assert_int_equal(size_of("3TB"), 3000000000000ULL);
  assert_int_equal(size_of("1.5k"), 1500);
}

static void test_units__binary_units(void **state)
{
  (void)state;
  assert_int_equal(size_of("1Ki"), 1024);
  assert_int_equal(size_of("1KiB"), 1024);
  assert_int_equal(size_of("1kiB"), 1024);
  assert_int_equal(size_of("64Mi"), 64ULL << 20);
  assert_int_equal(size_of("64MiB"), 64ULL << 20);
  assert_int_equal(size_of("2Gi"), 2ULL << 30);
  assert_int_equal(size_of("2GiB"), 2ULL << 30);
  assert_int_equal(size_of("1Ti"), 1ULL << 40);
  assert_int_equal(size_of("1TiB"), 1ULL << 40);
  assert_int_equal(size_of("0.5GiB"), 1ULL << 29);
}

static void test_units__bad_sizes(void **state)
{
  static const char *const bad[] = {"",    "G",   "12X",  "-1G", "+1G", "1e3",  "0x10", " 1G", "1G ", "1 G",
                                    "1GG", "1iB", "1BB",  "1m",  "1g",  "1mb",  "inf",  "nan", "1.2.3", ".",
                                    "1Gb", "1Gi B", "1Bi", "1Mx", "2P"};
  uint64_t v = 7;
  (void)state;
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    if (gpujit__parse_size(bad[i], &v) != GPUJIT_EINVAL)
      fail_msg("'%s' taken as %llu bytes", bad[i], (unsigned long long)v);
    char want[64];
    snprintf(want, sizeof(want), "invalid size '%s'", bad[i]);
    if (!strstr(gpujit_error_last(), want) || !strstr(gpujit_error_last(), "a bare number is GiB"))
      fail_msg("'%s': message '%s'", bad[i], gpujit_error_last());
  }
  assert_int_equal(v, 7); /* untouched */
  assert_int_equal(gpujit__parse_size("99999999999T", &v), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "too large"));
  assert_int_equal(gpujit__parse_size(NULL, &v), GPUJIT_EINVAL);
  assert_int_equal(gpujit__parse_size("1G", NULL), GPUJIT_EINVAL);
}

static void test_units__ages(void **state)
{
  double s = 0;
  (void)state;
  assert_int_equal(gpujit__parse_age("30s", &s), 0);
  assert_true(s == 30);
  assert_int_equal(gpujit__parse_age("7d", &s), 0);
  assert_true(s == 7 * 86400);
  assert_int_equal(gpujit__parse_age("30m", &s), 0);
  assert_true(s == 1800);
  assert_int_equal(gpujit__parse_age("12h", &s), 0);
  assert_true(s == 12 * 3600);
  assert_int_equal(gpujit__parse_age("2w", &s), 0);
  assert_true(s == 14 * 86400);
}

static void test_units__bad_ages(void **state)
{
  static const char *const bad[] = {"", "d", "1.5h", "0x10d", "1e3", "-1d", "7x", "7dd", "7 d", "7D", " 7d"};
  double s = -1;
  (void)state;
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char want[64];
    if (gpujit__parse_age(bad[i], &s) != GPUJIT_EINVAL)
      fail_msg("'%s' taken as %g s", bad[i], s);
    snprintf(want, sizeof(want), "invalid age '%s'", bad[i]);
    if (!strstr(gpujit_error_last(), want))
      fail_msg("'%s': message '%s'", bad[i], gpujit_error_last());
  }
  /* a bare number: its unit would be a guess (ccache refuses it too) */
  assert_int_equal(gpujit__parse_age("3600", &s), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "a number needs a unit"));
  assert_non_null(strstr(gpujit_error_last(), "3600s (seconds) or 3600d (days)"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_units__bare_number_is_gib), cmocka_unit_test(test_units__decimal_units),
      cmocka_unit_test(test_units__binary_units),       cmocka_unit_test(test_units__bad_sizes),
      cmocka_unit_test(test_units__ages),               cmocka_unit_test(test_units__bad_ages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
