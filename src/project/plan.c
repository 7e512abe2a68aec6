/* Planning a project build: what each miss is expected to cost and which include block it
 * shares, and which module a worker takes next (project/plan.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "compile/pch/pch.h"
#include "module/build.h"
#include "module/history.h"
#include "project/plan.h"
#include "project/wire.h"

/* Measured so far: actual over expected compile time, and a PCH user's compile over expected. */
double gpujit__scale_of(const gpujit__run *r) { return r->expected_done > 0 ? r->actual_done / r->expected_done : 1; }
static double used_factor(const gpujit__run *r) { return r->used_expected > 0 ? r->used_actual / r->used_expected : 0.25; }

/* What the scheduler knows before compiling: expected time and include block. */
void gpujit__plan_module(gpujit__run *r, gpujit__project_module *pm, const gpujit_module_options *o)
{
  char arch[32], *text = NULL, *dir;
  gpujit__buf src = {0};
  gpujit__pch_block block = {0};
  XXH64_state_t *st;
  if (gpujit__resolve_arch(arch, sizeof(arch), o->arch, r->o->cache) < 0) {
    gpujit_error_clear();
    snprintf(arch, sizeof(arch), "?");
  }
  pm->expected_ms = gpujit__history_get(r->o->cache, (const char *const *)pm->files, pm->files_count, arch);
  if (gpujit__file_read(&src, pm->files[0]) == 0 && src.data)
    gpujit__pch_block_of(&block, src.data, src.len, o->prelude, NULL);
  gpujit_error_clear();
  if (pm->expected_ms < 0) /* no record: a guess that ranks header-heavy and long sources first */
    pm->expected_ms = (block.has_include ? 1000.0 : 100.0) + (double)src.len / 100.0;
  pm->has_block = block.has_include && pm->files_count == 1;
  text = cJSON_PrintUnformatted(pm->options);
  dir = gpujit__dirname(pm->files[0]);
  if ((st = XXH64_createState())) {
    XXH64_reset(st, 0);
    XXH64_update(st, &block.key, sizeof(block.key));
    XXH64_update(st, text ? text : "", text ? strlen(text) + 1 : 1);
    XXH64_update(st, dir ? dir : "", dir ? strlen(dir) + 1 : 1);
    XXH64_update(st, arch, strlen(arch));
    pm->block = XXH64_digest(st);
    XXH64_freeState(st);
  }
  free(text);
  free(dir);
  gpujit__buf_free(&src);
}

static bool holds(const gpujit__worker *w, uint64_t block)
{
  for (size_t i = 0; i < w->pch_count && i < 8; i++)
    if (w->pch_blocks[i] == block)
      return true;
  return false;
}

void gpujit__hold(gpujit__worker *w, uint64_t block)
{
  if (!holds(w, block))
    w->pch_blocks[w->pch_count++ % 8] = block;
}

/* When worker v could start a module of its PCH's block: what its job has left, then the module. */
static double holder_ready_ms(const gpujit__run *r, const gpujit__worker *v, double now)
{
  double left = 0;
  if (v->job >= 0) {
    double job = r->p->mods[v->job].expected_ms * gpujit__scale_of(r) *
                 (v->creating ? 1.45 : (v->has_block && holds(v, v->block) ? used_factor(r) : 1));
    left = job - (now - v->job_start_us) / 1e3;
    if (left < 0.05 * job)
      left = 0.05 * job;
  }
  return left;
}

/*
 * The next module for worker `w` (NULL: this process): the longest of a block whose PCH it holds,
 * else the longest pending — but a module that a worker holding its block's PCH would finish
 * sooner, after its current job, than `w` could from scratch is left to that worker.
 * `*create`: make a PCH for it — only while its block has more modules left, beyond those the
 * idle workers start now, than workers holding (or making) its PCH, so a PCH made is used.
 */
long gpujit__choose(gpujit__run *r, const gpujit__worker *w, bool *create)
{
  double now = gpujit__now_us(), scale = gpujit__scale_of(r), u = used_factor(r);
  long best = -1;
  bool best_held = false;
  size_t at = 0, left_of_block = 0, holders = 0, idle = 0;
  for (size_t k = 0; k < r->npending; k++) {
    gpujit__project_module *pm = &r->p->mods[r->pending[k]];
    bool held = w && pm->has_block && holds(w, pm->block);
    if (w && pm->has_block && !held) {
      double self = pm->expected_ms * scale, soonest = -1;
      for (size_t v = 0; v < r->nw; v++) {
        const gpujit__worker *o = &r->w[v];
        if (o == w || o->pid <= 0 || !(holds(o, pm->block) || (o->creating && o->block == pm->block)))
          continue;
        double t = holder_ready_ms(r, o, now) + pm->expected_ms * scale * u;
        if (soonest < 0 || t < soonest)
          soonest = t;
      }
      if (soonest >= 0 && soonest < self && r->running > 0)
        continue; /* (with nothing running, nothing is worth waiting for) */
    }
    if (best < 0 || (held && !best_held) ||
        (held == best_held && pm->expected_ms > r->p->mods[best].expected_ms)) {
      best = (long)r->pending[k];
      best_held = held;
      at = k;
    }
  }
  if (best < 0)
    return -1;
  r->pending[at] = r->pending[--r->npending];
  *create = false;
  if (!r->p->mods[best].has_block || best_held)
    return best;
  for (size_t k = 0; k < r->npending; k++)
    left_of_block += r->p->mods[r->pending[k]].has_block && r->p->mods[r->pending[k]].block == r->p->mods[best].block;
  for (size_t v = 0; w && v < r->nw; v++) {
    const gpujit__worker *o = &r->w[v];
    if (o == w)
      continue;
    idle += o->pid <= 0 || o->job < 0; /* they start something now, likely of this block too */
    holders += o->pid > 0 && (holds(o, r->p->mods[best].block) || (o->creating && o->block == r->p->mods[best].block));
  }
  /* The modules of the block that will still wait when every idle worker has one: a PCH made
   * now pays only if some of them are left for it. */
  *create = left_of_block > idle && left_of_block - idle > holders;
  return best;
}

