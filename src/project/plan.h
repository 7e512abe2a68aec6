/* Planning a project build (project/plan.c): the state of one build, each miss's expected cost
 * and include block, and the choice of a worker's next module. */
#ifndef GPUJIT_PROJECT_PLAN_H
#define GPUJIT_PROJECT_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "gpujit/module.h"
#include "gpujit/project.h"
#include "project/pool.h"
#include "project/project.h"

typedef struct gpujit__run {
  gpujit_project *p;
  const gpujit_project_options *o;
  double t0;
  gpujit__worker *w;
  size_t nw;       /* worker slots */
  int started;     /* workers started, replacements included */
  size_t *pending; /* module indices not yet sent */
  size_t npending, running, done, hits, failed;
  double expected_done, actual_done; /* compiles done: expected and actual ms */
  double used_expected, used_actual; /* those that used a PCH */
  struct gpujit__project_via *via;   /* misses to a build server (NULL: own workers only) */
  bool via_lost;                     /* it failed: own workers from then on */
  size_t via_slots;                  /* slots 1..via_slots go to it */
} gpujit__run;

/** Actual over expected compile time of the compiles done so far (1 before any). */
double gpujit__scale_of(const gpujit__run *r);

/** A miss's expected compile time (history, else a guess) and include block key. */
void gpujit__plan_module(gpujit__run *r, gpujit__project_module *pm, const gpujit_module_options *o);

/** Worker `w` now holds a PCH for `block`. */
void gpujit__hold(gpujit__worker *w, uint64_t block);

/**
 * The next module for worker `w` (NULL: this process), taken off the pending list: the longest
 * of a block whose PCH it holds, else the longest pending — but a module that a worker holding
 * its block's PCH would finish sooner (after its current job) is left to that worker.
 * `*create`: make a PCH for it — only while its block has more modules left, beyond those the
 * idle workers start now, than workers holding or making its PCH, so a PCH made is used. @return the module, or -1 (wait).
 */
long gpujit__choose(gpujit__run *r, const gpujit__worker *w, bool *create);

#endif
