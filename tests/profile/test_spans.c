/* The injection library's launch runs (src/inject/spans.c): every launch's module is found
 * again by its correlation id, in order and out of order, however many launches there are. */
#include "helpers.h"
#include "inject/spans.h"

static uint64_t module_of(uint32_t corr)
{
  uint64_t m = 99;
  assert_true(gji_span_module(corr, &m));
  return m;
}

static void test_runs(void **state)
{
  uint64_t m;
  (void)state;
  assert_false(gji_span_module(5, &m));      /* nothing launched yet */
  for (uint32_t c = 10; c < 1000010; c += 2) /* a million launches of one module: one run */
    gji_span_launch(c, 0xa);
  gji_span_launch(1000011, 0xb);
  gji_span_launch(1000013, 0xa);
  assert_false(gji_span_module(9, &m)); /* before every launch */
  assert_int_equal(module_of(10), 0xa);
  assert_int_equal(module_of(999998), 0xa);
  assert_int_equal(module_of(1000011), 0xb);
  assert_int_equal(module_of(1000013), 0xa);
  /* a launch whose callback came late (another thread): in its place, the run it split goes on */
  gji_span_launch(1000020, 0xa);
  gji_span_launch(1000017, 0xc);
  assert_int_equal(module_of(1000015), 0xa);
  assert_int_equal(module_of(1000017), 0xc);
  assert_int_equal(module_of(1000018), 0xa);
  assert_int_equal(module_of(1000020), 0xa);
  gji_span_launch(1000021, 0xd);
  gji_span_launch(1000019, 0xe); /* right before a run that starts next */
  assert_int_equal(module_of(1000019), 0xe);
  assert_int_equal(module_of(1000020), 0xa);
  assert_int_equal(module_of(1000021), 0xd);
}

static void test_bounded(void **state)
{
  uint64_t m;
  (void)state;
  /* alternating modules: a run each; the oldest give way, the newest are all kept */
  for (uint32_t c = 2000000; c < 2000000 + 200000; c++)
    gji_span_launch(c, c & 1 ? 0x1 : 0x2);
  assert_false(gji_span_module(2000000, &m));
  assert_int_equal(module_of(2000000 + 199999), 0x1);
  assert_int_equal(module_of(2000000 + 199998), 0x2);
  assert_int_equal(module_of(2000000 + 200000 - 65536), 0x2);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_runs), cmocka_unit_test(test_bounded)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
