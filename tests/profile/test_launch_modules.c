/* The injection library's launches by correlation id (src/inject/launch_modules.c): every launch's module
 * is found again by its correlation id, in order and out of order, however many launches there
 * are; the resolver is asked once per function (and again after an unload); a launch the table no
 * longer holds is found by a kernel name one module alone launched, never otherwise. */
#include "helpers.h"
#include "inject/launch_modules.h"

/* Test functions: handle 0xF00 + i is in module fn_module[i], named fn_name[i]. */
static uint64_t fn_module[16] = {0xa, 0xa, 0xb, 0xc, 0xd};
static const char *fn_name[16] = {"k_one", "k_two", "k_one", "k_three", NULL};
static int asked[16];

static bool resolve(uint64_t fn, uint64_t *module, const char **name)
{
  int i = (int)(fn - 0xF00);
  if (i < 0 || i >= 16 || !fn_module[i])
    return false;
  asked[i]++;
  *module = fn_module[i];
  *name = fn_name[i];
  return true;
}

#define FN(i) (0xF00 + (uint64_t)(i))

static uint64_t module_of(uint32_t corr, const char *name)
{
  uint64_t m = 99;
  assert_true(gji_span_module(corr, name, &m));
  return m;
}

static int setup(void **state)
{
  (void)state;
  gji_span_set_resolver(resolve);
  return 0;
}

static void test_spans__in_order(void **state)
{
  uint64_t m;
  (void)state;
  assert_false(gji_span_module(5, NULL, &m)); /* nothing launched yet */
  assert_int_equal(m, 0);
  for (uint32_t c = 10; c < 1000010; c += 2) /* a million launches, two functions of one module */
    gji_span_launch(c, FN(c % 4 == 0 ? 0 : 1));
  gji_span_launch(1000011, FN(2));
  gji_span_launch(1000013, FN(0));
  assert_int_equal(asked[0], 1); /* once per function */
  assert_int_equal(asked[1], 1);
  assert_int_equal(module_of(999998, NULL), 0xa);
  assert_int_equal(module_of(1000011, NULL), 0xb);
  assert_int_equal(module_of(1000013, NULL), 0xa);
  assert_false(gji_span_module(1000012, NULL, &m)); /* no launch had it */
}

static void test_spans__out_of_order(void **state)
{
  (void)state;
  /* callbacks in another order than their correlation ids (threads): each is its own */
  gji_span_launch(2000020, FN(0));
  gji_span_launch(2000017, FN(2));
  gji_span_launch(2000019, FN(3));
  gji_span_launch(2000018, FN(0));
  assert_int_equal(module_of(2000017, NULL), 0xb);
  assert_int_equal(module_of(2000018, NULL), 0xa);
  assert_int_equal(module_of(2000019, NULL), 0xc);
  assert_int_equal(module_of(2000020, NULL), 0xa);
}

static void test_spans__late_records_by_unique_name(void **state)
{
  uint64_t m = 99;
  uint32_t c = 3000000;
  (void)state;
  gji_span_launch(c, FN(3));     /* k_three: module 0xc alone */
  gji_span_launch(c + 1, FN(0)); /* k_one: modules 0xa and 0xb both launched it */
  for (uint32_t i = 2; i < GJI_SPAN_SLOTS + 2; i++)
    gji_span_launch(c + i, FN(1));
  assert_int_equal(module_of(c + 2, NULL), 0xa);          /* its slot was reused by c + 2 */
  assert_false(gji_span_module(c, NULL, &m));              /* no name: not found */
  assert_int_equal(module_of(c, "k_three"), 0xc);          /* a name one module launched */
  assert_false(gji_span_module(c + 1, "k_one", &m));       /* two modules launched k_one */
  assert_int_equal(m, 0);
  assert_false(gji_span_module(c + 1, "never_launched", &m));
}

static void test_spans__unload_asks_again(void **state)
{
  int before = asked[3];
  (void)state;
  gji_span_launch(4000000, FN(3));
  assert_int_equal(asked[3], before); /* known */
  gji_span_unload();
  fn_module[3] = 0xe; /* the handle is another module's now */
  gji_span_launch(4000001, FN(3));
  assert_int_equal(asked[3], before + 1);
  assert_int_equal(module_of(4000000, NULL), 0xc);
  assert_int_equal(module_of(4000001, NULL), 0xe);
  assert_false(gji_span_module(4000001 - GJI_SPAN_SLOTS, "k_three", &(uint64_t){0})); /* 0xc and 0xe: ambiguous now */
}

static void test_spans__unresolved(void **state)
{
  uint64_t before = gji_span_unresolved();
  (void)state;
  gji_span_launch(5000000, FN(9)); /* the resolver cannot say */
  gji_span_launch(5000001, FN(9));
  assert_int_equal(module_of(5000000, NULL), 0); /* launched, of no module */
  assert_int_equal(gji_span_unresolved() - before, 1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_spans__in_order), cmocka_unit_test(test_spans__out_of_order),
                                     cmocka_unit_test(test_spans__late_records_by_unique_name),
                                     cmocka_unit_test(test_spans__unload_asks_again),
                                     cmocka_unit_test(test_spans__unresolved)};
  return cmocka_run_group_tests(tests, setup, NULL);
}
