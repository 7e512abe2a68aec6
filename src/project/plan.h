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

/** The PCH plan of one include block, made before the build fans out (gpujit__plan_pch). */
typedef struct gpujit__block_plan {
  uint64_t block;
  size_t modules;  /* its misses (then: those still pending, recounted by each choice) */
  double mean_ms;  /* their mean expected compile */
  size_t creators; /* workers that make its PCH, started first (0: none; its modules compile plain) */
  size_t started;  /* creators sent */
  size_t made;     /* PCHs made */
  size_t failed;   /* creators that made none */
} gpujit__block_plan;

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
  gpujit__block_plan *plans;         /* the PCH plan: one per include block with misses */
  size_t nplans;
  double plan_ms, plain_ms;          /* the plan's expected wall time, and without any PCH */
} gpujit__run;

/** Actual over expected compile time of the compiles done so far (1 before any). */
double gpujit__scale_of(const gpujit__run *r);

/** A miss's expected compile time (history, else a guess) and include block key. */
void gpujit__plan_module(gpujit__run *r, gpujit__project_module *pm, const gpujit_module_options *o);

/** What making a PCH costs over a plain compile, and a compile that uses one against plain,
 *  before any is measured (NVRTC 13.0 on CUB's block headers: ~1.45, and 0.15-0.24 measured on
 *  three hosts). */
#define GPUJIT__PCH_CREATE_FACTOR 1.45
#define GPUJIT__PCH_USE_FACTOR 0.2

/**
 * How many workers make each block's PCH (`k[i]`, 0: none) for `nblocks` include blocks of `n[i]`
 * modules of mean `ms[i]` each, `other_ms` of modules outside any block (the longest
 * `longest_ms`), on `workers` workers: the creators start at once, each then compiles its share
 * of the block with its PCH, everything else fills the other workers. Chosen to make the
 * expected wall time least (more creators shorten a block's chain and add work), and no PCH at
 * all where that is expected faster. @return the expected wall time of the plan (ms).
 */
double gpujit__plan_creators(size_t *k, const size_t *n, const double *ms, size_t nblocks, double other_ms,
                             double longest_ms, size_t workers, double use_factor);

/** The PCH plan of a build's pending misses on its `nw` workers, into r->plans (before the
 *  workers start). @return 0 or GPUJIT_ENOMEM. */
int gpujit__plan_pch(gpujit__run *r);

/** A creator's job ended: `made` says whether it made the block's PCH. */
void gpujit__plan_creator_done(gpujit__run *r, uint64_t block, bool made);

/** Worker `w` now holds a PCH for `block`. */
void gpujit__hold(gpujit__worker *w, uint64_t block);

/**
 * The next module for worker `w` (NULL: this process), taken off the pending list: the longest
 * of a block whose PCH it holds; else a planned PCH creation (`*create` set); else the longest
 * module outside any planned block; a module of a block whose PCH others make or hold is left to
 * them while they would finish it sooner (their queue counted) than `w` could from scratch.
 * @return the module, or -1 (wait).
 */
long gpujit__choose(gpujit__run *r, const gpujit__worker *w, bool *create);

#endif
