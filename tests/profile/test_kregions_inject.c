/* Kernel regions read by `gpujit profile` in a program it did not build: the injection library
 * binds a buffer to the module that declares gpujit_regions, the program (kregions_target.c,
 * acting as the device through a stand-in libcuda) writes events into it, and the profile's
 * kernel_regions table says what they were — at exit, at a schedule's active step's end (the
 * steps before emptied, those after not read), with a buffer too small (kept + dropped = made),
 * and with the context gone before exit (a note, no crash). */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpujit.h"

static gpujit_profile *run(const char *what, const char *schedule)
{
  const char *args[] = {GPUJIT_KREGIONS_TARGET, what, NULL};
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  gpujit_profile_totals t;
  gpujit_profile *p = NULL;
  o.inject_path = GPUJIT_INJECT;
  o.no_cupti = 1; /* the stand-in driver has no CUPTI: loads come through the driver's wrappers */
  o.schedule = schedule;
  assert_int_equal(gpujit_profile_run(&p, (char *const *)args, &o), 0);
  assert_non_null(p);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.exit_status, 0);
  return p;
}

static const gpujit_profile_region *row(const gpujit_profile *p, const char *region)
{
  const gpujit_profile_region *r;
  size_t n = gpujit_profile_regions(p, &r);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(r[i].region, region))
      return &r[i];
  return NULL;
}

static void test_read_at_exit(void **state)
{
  gpujit_profile *p = run("plain", NULL);
  const gpujit_profile_region *spin, *inner;
  (void)state;
  assert_int_equal(gpujit_profile_regions(p, NULL), 2);
  assert_non_null(spin = row(p, "spin"));
  assert_non_null(inner = row(p, "inner"));
  assert_int_equal(spin->calls, 12); /* 4 warps x 3 launches */
  assert_true(spin->cycles_mean == 1000 && spin->cycles_median == 1000 && spin->cycles_max == 1000);
  assert_true(spin->ns_mean == 1500 && spin->ns_max == 1500);
  assert_int_equal(spin->depth, 0);
  assert_int_equal(inner->calls, 12);
  assert_true(inner->cycles_mean == 250 && inner->ns_median == 375);
  assert_int_equal(inner->depth, 1);
  assert_int_equal(spin->events, 48);
  assert_int_equal(spin->dropped, 0);
  assert_int_equal(spin->unmatched, 0);
  assert_int_equal(spin->launches, 3);
  assert_int_equal(spin->reads, 1);
  assert_int_equal(spin->sms, 2);
  assert_int_equal(spin->units, 4);
  assert_int_equal(spin->min_call_cycles, 250);
  assert_string_equal(spin->scope, "warp");
  {
    char *text = NULL;
    assert_int_equal(gpujit_profile_format(p, "t", 0, &text), 0);
    assert_non_null(strstr(text, "kernel regions of "));
    assert_non_null(strstr(text, "      inner ")); /* nested under spin */
    gpujit_free(text);
  }
  gpujit_profile_free(p);
}

static void test_schedule_reads_the_active_step(void **state)
{
  gpujit_profile *p = run("schedule", "wait=1,warmup=0,active=1,repeat=1");
  const gpujit_profile_region *spin;
  (void)state;
  assert_non_null(spin = row(p, "spin"));
  assert_int_equal(spin->calls, 4); /* the active step's one launch: not the wait's two, not the two after */
  assert_int_equal(spin->launches, 1);
  assert_int_equal(spin->events, 16);
  assert_int_equal(spin->reads, 1);
  gpujit_profile_free(p);
}

/* Two steps waited through (the second boundary passes between two unrecorded steps, where the
 * library touches no buffer), then the active step, open at the exit: its two launches alone. */
static void test_schedule_waits_through_then_reads_the_active_step(void **state)
{
  gpujit_profile *p = run("schedule", "wait=2,warmup=0,active=1,repeat=1");
  const gpujit_profile_region *spin;
  (void)state;
  assert_non_null(spin = row(p, "spin"));
  assert_int_equal(spin->calls, 8); /* step 2's two launches x 4 warps, none of the waited steps' three */
  assert_int_equal(spin->launches, 2);
  assert_int_equal(spin->reads, 1);
  gpujit_profile_free(p);
}

static void test_full_buffer_counts_what_it_drops(void **state)
{
  gpujit_profile *p;
  const gpujit_profile_region *spin;
  (void)state;
  setenv("GPUJIT_PROFILE_REGIONS", "64", 1); /* one chunk: the first warp slot takes it */
  p = run("plain", NULL);
  unsetenv("GPUJIT_PROFILE_REGIONS");
  assert_non_null(spin = row(p, "spin"));
  assert_int_equal(spin->events, 12);
  assert_int_equal(spin->events + spin->dropped, 48);
  assert_int_equal(spin->calls, 3);
  {
    char *text = NULL;
    assert_int_equal(gpujit_profile_format(p, "t", 0, &text), 0);
    assert_non_null(strstr(text, "dropped 36 events"));
    gpujit_free(text);
  }
  gpujit_profile_free(p);
}

static void test_context_gone_at_exit(void **state)
{
  gpujit_profile *p = run("gone", NULL);
  (void)state;
  assert_int_equal(gpujit_profile_regions(p, NULL), 0);
  assert_non_null(strstr(gpujit_profile_notes(p), "was gone at exit"));
  gpujit_profile_free(p);
}

static void test_module_without_regions(void **state)
{
  gpujit_profile *p = run("unbound", NULL);
  (void)state;
  assert_int_equal(gpujit_profile_regions(p, NULL), 0);
  assert_null(strstr(gpujit_profile_notes(p), "kernel regions"));
  gpujit_profile_free(p);
}

static void test_state_the_program_bound_is_left_to_it(void **state)
{
  gpujit_profile *p = run("own", NULL); /* run() checks the exit status: 5 where it was taken over */
  (void)state;
  assert_int_equal(gpujit_profile_regions(p, NULL), 0);
  gpujit_profile_free(p);
}

static void test_regions_off(void **state)
{
  gpujit_profile *p;
  (void)state;
  setenv("GPUJIT_PROFILE_REGIONS", "0", 1);
  p = run("plain", NULL);
  unsetenv("GPUJIT_PROFILE_REGIONS");
  assert_int_equal(gpujit_profile_regions(p, NULL), 0);
  gpujit_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_at_exit),
      cmocka_unit_test(test_schedule_reads_the_active_step),
      cmocka_unit_test(test_schedule_waits_through_then_reads_the_active_step),
      cmocka_unit_test(test_full_buffer_counts_what_it_drops),
      cmocka_unit_test(test_context_gone_at_exit),
      cmocka_unit_test(test_module_without_regions),
      cmocka_unit_test(test_state_the_program_bound_is_left_to_it),
      cmocka_unit_test(test_regions_off),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
