/* The PCH plan of a project build, without NVRTC: the planner's choices, and a simulated build
 * (the scheduler's own chooser driving fake workers through simulated time) whose wall time,
 * PCHs made and used are what the plan promises — no module of a planned block starts before a
 * PCH exists and compiles without one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/clock.h"
#include "project/plan.h"

/* What a simulated compile costs, as measured on the H200 host (issue 62): a header-heavy module
 * 2253 ms plain, 1.45x that making a PCH, 370 ms with one; a small module 29 ms. */
#define HEAVY_MS 2253.0
#define SMALL_MS 29.0
#define USE_MS 370.0

typedef struct sim {
  size_t created, used, plain_heavy, planned;
  double wall_ms;
} sim;

/* A project of `heavy` header-heavy modules in two include blocks (alternating) and `small` small
 * ones, built by `workers` fake workers; `plan`: with the PCH plan (else every block is left to
 * the chooser with no creators planned, as a build with --no-pch). */
static sim simulate(size_t heavy, size_t small, size_t workers, bool plan)
{
  gpujit_project proj = {0};
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit__run r = {0};
  size_t n = heavy + small, done = 0;
  double t = 0, *end = calloc(workers, sizeof(double)), *start = calloc(workers, sizeof(double));
  gpujit_pch_status *how = calloc(workers, sizeof(*how));
  sim out = {0};
  po.pch = plan;
  proj.mods = calloc(n, sizeof(*proj.mods));
  proj.count = n;
  r.p = &proj;
  r.o = &po;
  r.nw = workers;
  r.w = calloc(workers, sizeof(*r.w));
  r.pending = calloc(n, sizeof(size_t));
  for (size_t i = 0; i < n; i++) {
    proj.mods[i].has_block = i < heavy;
    proj.mods[i].block = i < heavy ? 1 + i % 2 : 0;
    proj.mods[i].expected_ms = i < heavy ? HEAVY_MS : SMALL_MS;
    r.pending[r.npending++] = i;
  }
  for (size_t k = 0; k < workers; k++) {
    r.w[k].pid = 1000 + (int)k; /* never signalled: the chooser only asks whether it runs */
    r.w[k].index = (int)k + 1;
    r.w[k].job = -1;
  }
  assert_int_equal(gpujit__plan_pch(&r), 0);
  for (size_t j = 0; j < r.nplans; j++)
    out.planned += r.plans[j].creators;

  while (done < n) {
    double next = -1, now_us = gpujit__now_us();
    size_t who = 0;
    for (size_t k = 0; k < workers; k++) { /* the chooser sees simulated time through job starts */
      gpujit__worker *w = &r.w[k];
      if (w->job >= 0)
        w->job_start_us = now_us - (t - start[k]) * 1e3;
    }
    for (size_t k = 0; k < workers; k++) {
      gpujit__worker *w = &r.w[k];
      bool create = false;
      long i;
      if (w->job >= 0 || (i = gpujit__choose(&r, w, &create)) < 0)
        continue;
      gpujit__project_module *pm = &proj.mods[i];
      bool held = false;
      for (size_t h = 0; h < w->pch_count && h < 8; h++)
        held |= pm->has_block && w->pch_blocks[h] == pm->block;
      w->job = i;
      w->creating = create;
      w->block = pm->block;
      w->has_block = pm->has_block;
      how[k] = held ? GPUJIT_PCH_STATUS_USED : create ? GPUJIT_PCH_STATUS_CREATED : GPUJIT_PCH_STATUS_NONE;
      start[k] = t;
      end[k] = t + (held ? USE_MS : create ? 1.45 * pm->expected_ms : pm->expected_ms);
      r.running++;
    }
    for (size_t k = 0; k < workers; k++)
      if (r.w[k].job >= 0 && (next < 0 || end[k] < next)) {
        next = end[k];
        who = k;
      }
    assert_true(next >= 0); /* something runs while modules are left: the chooser never stalls */
    t = next;
    {
      gpujit__worker *w = &r.w[who];
      gpujit__project_module *pm = &proj.mods[w->job];
      pm->r.pch = how[who];
      out.created += how[who] == GPUJIT_PCH_STATUS_CREATED;
      out.used += how[who] == GPUJIT_PCH_STATUS_USED;
      out.plain_heavy += pm->has_block && how[who] == GPUJIT_PCH_STATUS_NONE;
      if (how[who] != GPUJIT_PCH_STATUS_NONE)
        gpujit__hold(w, pm->block);
      if (w->creating)
        gpujit__plan_creator_done(&r, pm->block, true);
      w->creating = false;
      w->job = -1;
      r.running--;
      done++;
    }
  }
  out.wall_ms = t;
  free(r.plans);
  free(r.w);
  free(r.pending);
  free(proj.mods);
  free(end);
  free(start);
  free(how);
  return out;
}

/* The project on 16 cores: 24 heavy modules in two blocks, 40 small. Before the plan,
 * most heavy modules started at once without a PCH (4 made, 8 used). */
static void test_plan__sixteen_workers_make_pchs_first(void **state)
{
  sim s = simulate(24, 40, 16, true), none = simulate(24, 40, 16, false);
  (void)state;
  printf("# 16 workers: PCH %zu made, %zu used, %zu heavy plain, %.0f ms; no PCH %.0f ms\n", s.created, s.used,
         s.plain_heavy, s.wall_ms, none.wall_ms);
  assert_int_equal(s.created, s.planned);  /* each planned PCH made once, at the start */
  assert_true(s.created >= 4 && s.created <= 12);
  assert_true(s.used >= 4);
  /* a plain heavy compile only where a worker would otherwise idle and beat the holders' queue */
  assert_true(s.plain_heavy <= 16 - s.created);
  assert_int_equal(s.created + s.used + s.plain_heavy, 24);
  assert_true(s.wall_ms < 0.85 * none.wall_ms); /* and the build is shorter than without */
}

/* One worker: each block's PCH made once, then used by the rest of the block. */
static void test_plan__one_worker_makes_each_pch_once(void **state)
{
  sim s = simulate(24, 40, 1, true);
  (void)state;
  assert_int_equal(s.created, 2);
  assert_int_equal(s.used, 22);
  assert_int_equal(s.plain_heavy, 0);
}

/* More modules per block than workers: several creators per block, each a PCH made once. */
static void test_plan__creators_grow_with_workers(void **state)
{
  size_t k1[2], k4[2], k8[2], n[2] = {12, 12};
  double ms[2] = {HEAVY_MS, HEAVY_MS};
  (void)state;
  gpujit__plan_creators(k1, n, ms, 2, 40 * SMALL_MS, SMALL_MS, 1, 0.164);
  gpujit__plan_creators(k4, n, ms, 2, 40 * SMALL_MS, SMALL_MS, 4, 0.164);
  gpujit__plan_creators(k8, n, ms, 2, 40 * SMALL_MS, SMALL_MS, 8, 0.164);
  assert_int_equal(k1[0], 1);
  assert_int_equal(k1[1], 1);
  assert_true(k4[0] >= 1 && k4[0] <= k8[0] && k8[0] > 1);
  assert_int_equal(k8[0], k8[1]); /* equal blocks, equal shares */
}

/* A block of one module, or modules too short for a PCH to pay: none planned. */
static void test_plan__no_pch_where_it_cannot_pay(void **state)
{
  size_t k[2], n[2] = {1, 3};
  double ms[2] = {HEAVY_MS, HEAVY_MS};
  (void)state;
  gpujit__plan_creators(k, n, ms, 2, 0, 0, 64, 0.164);
  assert_int_equal(k[0], 0);
  assert_int_equal(k[1], 0); /* 3 modules on 64 workers: each compiles at once, no PCH waited for */
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_plan__sixteen_workers_make_pchs_first),
    cmocka_unit_test(test_plan__one_worker_makes_each_pch_once),
    cmocka_unit_test(test_plan__creators_grow_with_workers),
    cmocka_unit_test(test_plan__no_pch_where_it_cannot_pay),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
