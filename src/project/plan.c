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
static double used_factor(const gpujit__run *r) { return r->used_expected > 0 ? r->used_actual / r->used_expected : GPUJIT__PCH_USE_FACTOR; }

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
                 (v->creating ? GPUJIT__PCH_CREATE_FACTOR : (v->has_block && holds(v, v->block) ? used_factor(r) : 1));
    left = job - (now - v->job_start_us) / 1e3;
    if (left < 0.05 * job)
      left = 0.05 * job;
  }
  return left;
}

/* ---- the plan, made before the build fans out ---------------------------------------------- */

/* Compiles slow down as more run at once (the processes share memory bandwidth and caches):
 * NVRTC scaled 10.3x over 16 processes on the H200 host, 8.8x on the H100 host. */
static double slowdown(double concurrent) { return concurrent > 1 ? 1 + 0.035 * (concurrent - 1) : 1; }

/* A block's chain: its PCH made, then the creator's share of the rest with it (k 0: plain). */
static double chain_of(size_t k, size_t n, double ms, double u)
{
  return k ? GPUJIT__PCH_CREATE_FACTOR * ms + (double)((n - k + k - 1) / k) * u * ms : ms;
}

/* The expected wall time of a plan: the longest chain or the work spread over the workers,
 * whichever bounds it, slowed by how many compiles run at once on average. */
static double makespan(const size_t *k, const size_t *n, const double *ms, size_t nb, double other, double longest,
                       size_t workers, double u)
{
  double chain = longest, work = other, base, conc;
  for (size_t i = 0; i < nb; i++) {
    double c = chain_of(k[i], n[i], ms[i], u);
    chain = c > chain ? c : chain;
    work += k[i] ? (double)k[i] * GPUJIT__PCH_CREATE_FACTOR * ms[i] + (double)(n[i] - k[i]) * u * ms[i]
                 : (double)n[i] * ms[i];
  }
  base = work / (double)workers > chain ? work / (double)workers : chain;
  conc = base > 0 ? work / base : 1;
  return base * slowdown(conc > (double)workers ? (double)workers : conc);
}

/*
 * One creator for every block a PCH pays for when its modules compile one after another; then,
 * step by step, one more creator for the block with the longest chain (its last step: none, all
 * plain), keeping the best plan seen — more creators shorten the chains and add work, so the
 * best lies where the two bounds meet. Last, no PCH at all where that is expected as fast.
 */
double gpujit__plan_creators(size_t *k, const size_t *n, const double *ms, size_t nblocks, double other_ms,
                             double longest_ms, size_t workers, double use_factor)
{
  size_t *cur = calloc(nblocks ? nblocks : 1, sizeof(*cur)), total = 0;
  double best, none, m;
  if (!workers)
    workers = 1;
  memset(k, 0, nblocks * sizeof(*k));
  if (!cur)
    return makespan(k, n, ms, nblocks, other_ms, longest_ms, workers, use_factor);
  for (size_t i = 0; i < nblocks; i++) {
    cur[i] = k[i] = n[i] >= 2 && GPUJIT__PCH_CREATE_FACTOR + (double)(n[i] - 1) * use_factor < (double)n[i];
    total += cur[i];
  }
  best = makespan(k, n, ms, nblocks, other_ms, longest_ms, workers, use_factor);
  while (total <= workers) {
    size_t at = nblocks;
    for (size_t i = 0; i < nblocks; i++)
      if (cur[i] && (at == nblocks || chain_of(cur[i], n[i], ms[i], use_factor) >
                                          chain_of(cur[at], n[at], ms[at], use_factor)))
        at = i;
    if (at == nblocks)
      break;
    total -= cur[at];
    cur[at] = cur[at] + 1 < n[at] ? cur[at] + 1 : 0;
    total += cur[at];
    if ((m = makespan(cur, n, ms, nblocks, other_ms, longest_ms, workers, use_factor)) < best * 0.999) {
      best = m;
      memcpy(k, cur, nblocks * sizeof(*k));
    }
  }
  memset(cur, 0, nblocks * sizeof(*cur));
  if ((none = makespan(cur, n, ms, nblocks, other_ms, longest_ms, workers, use_factor)) <= best) {
    memset(k, 0, nblocks * sizeof(*k)); /* with many workers and few modules per block, the fastest */
    best = none;
  }
  free(cur);
  return best;
}

static gpujit__block_plan *plan_of(const gpujit__run *r, const gpujit__project_module *pm)
{
  for (size_t i = 0; pm->has_block && i < r->nplans; i++)
    if (r->plans[i].block == pm->block)
      return &r->plans[i];
  return NULL;
}

int gpujit__plan_pch(gpujit__run *r)
{
  size_t *n = NULL, *k = NULL;
  double *ms = NULL, other = 0, longest = 0;
  int err = 0;
  free(r->plans);
  r->nplans = 0;
  if (!(r->plans = calloc(r->npending + 1, sizeof(*r->plans))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t j = 0; j < r->npending; j++) {
    gpujit__project_module *pm = &r->p->mods[r->pending[j]];
    gpujit__block_plan *bp = plan_of(r, pm);
    if (!pm->has_block || !r->o->pch) {
      other += pm->expected_ms;
      longest = pm->expected_ms > longest ? pm->expected_ms : longest;
      continue;
    }
    if (!bp) {
      bp = &r->plans[r->nplans++];
      bp->block = pm->block;
    }
    bp->mean_ms += (pm->expected_ms - bp->mean_ms) / (double)++bp->modules;
  }
  n = calloc(r->nplans + 1, sizeof(*n));
  k = calloc(r->nplans + 1, sizeof(*k));
  ms = calloc(r->nplans + 1, sizeof(*ms));
  if (!n || !k || !ms) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < r->nplans; i++) {
    n[i] = r->plans[i].modules;
    ms[i] = r->plans[i].mean_ms;
  }
  r->plan_ms = gpujit__plan_creators(k, n, ms, r->nplans, other, longest, r->nw, GPUJIT__PCH_USE_FACTOR);
  for (size_t i = 0; i < r->nplans; i++) {
    r->plans[i].creators = k[i];
    if (k[i])
      gpujit__log(GPUJIT_LOG_DEBUG, "PCH plan: include block %016llx: %zu modules of ~%.0f ms, %zu worker(s) make its PCH",
                  (unsigned long long)r->plans[i].block, n[i], ms[i], k[i]);
    else if (n[i] > 1)
      gpujit__log(GPUJIT_LOG_DEBUG, "PCH plan: include block %016llx: %zu modules of ~%.0f ms, no PCH (as fast without)",
                  (unsigned long long)r->plans[i].block, n[i], ms[i]);
  }
  memset(k, 0, r->nplans * sizeof(*k));
  r->plain_ms = makespan(k, n, ms, r->nplans, other, longest, r->nw, GPUJIT__PCH_USE_FACTOR);
  if (r->nplans)
    gpujit__log(GPUJIT_LOG_DEBUG, "PCH plan: %zu workers, expected %.1f s with it, %.1f s without any PCH", r->nw,
                r->plan_ms / 1e3, r->plain_ms / 1e3);
done:
  free(n);
  free(k);
  free(ms);
  return err;
}

void gpujit__plan_creator_done(gpujit__run *r, uint64_t block, bool made)
{
  gpujit__project_module key = {.block = block, .has_block = true};
  gpujit__block_plan *bp = plan_of(r, &key);
  if (!bp)
    return;
  if (made) {
    bp->made++;
  } else if (++bp->failed == 1 && bp->started) {
    bp->started--; /* another worker makes it instead, once */
  } else if (!bp->made) {
    bp->creators = 0; /* NVRTC does not make one for this block: its modules compile plain */
  }
}

/* Whether worker w leaves module pm to the workers that make or hold its block's PCH: while one
 * of them would finish it sooner — after its current job and the block's modules queued before —
 * than w could from scratch. */
static bool leave_to_holders(const gpujit__run *r, const gpujit__worker *w, const gpujit__project_module *pm,
                             size_t left, double now)
{
  double self = pm->expected_ms * gpujit__scale_of(r), soonest = -1;
  size_t holders = 0;
  if (r->running == 0)
    return false; /* with nothing running, nothing is worth waiting for */
  for (size_t v = 0; v < r->nw; v++) {
    const gpujit__worker *o = &r->w[v];
    double t;
    if (o == w || o->pid <= 0 || !(holds(o, pm->block) || (o->creating && o->block == pm->block)))
      continue;
    holders++;
    t = holder_ready_ms(r, o, now);
    if (soonest < 0 || t < soonest)
      soonest = t;
  }
  if (w->remote) /* the server routes a block to its worker holding the PCH: wait only for its making */
    return holders > 0;
  if (!holders)
    return false;
  return soonest + (double)((left + holders - 1) / holders) * self * used_factor(r) < self;
}

/* The chooser in this process (no workers): the longest first; a PCH made while more of its
 * block follow (the process keeps it for them). */
static long choose_here(gpujit__run *r, bool *create)
{
  size_t at = 0, left_of_block = 0;
  long best = -1;
  for (size_t k = 0; k < r->npending; k++)
    if (best < 0 || r->p->mods[r->pending[k]].expected_ms > r->p->mods[best].expected_ms) {
      best = (long)r->pending[k];
      at = k;
    }
  if (best < 0)
    return -1;
  r->pending[at] = r->pending[--r->npending];
  for (size_t k = 0; k < r->npending; k++)
    left_of_block += r->p->mods[r->pending[k]].has_block && r->p->mods[r->pending[k]].block == r->p->mods[best].block;
  *create = r->p->mods[best].has_block && left_of_block > 0;
  return best;
}

long gpujit__choose(gpujit__run *r, const gpujit__worker *w, bool *create)
{
  double now = gpujit__now_us();
  long best = -1;
  int best_rank = 4;
  size_t at = 0;
  gpujit__block_plan *best_plan = NULL;
  if (!w)
    return choose_here(r, create);
  for (size_t j = 0; j < r->nplans; j++) /* the modules of each block still pending */
    r->plans[j].modules = 0;
  for (size_t k = 0; k < r->npending; k++) {
    gpujit__block_plan *bp = plan_of(r, &r->p->mods[r->pending[k]]);
    if (bp)
      bp->modules++;
  }
  for (size_t k = 0; k < r->npending; k++) {
    gpujit__project_module *pm = &r->p->mods[r->pending[k]];
    gpujit__block_plan *bp = plan_of(r, pm);
    int rank;
    if (bp && holds(w, pm->block))
      rank = 0; /* its PCH is here */
    else if (bp && bp->creators > bp->started)
      rank = 1; /* a planned PCH creation: on the critical path, started first */
    else if (!bp || !bp->creators)
      rank = 2;
    else if (leave_to_holders(r, w, pm, bp->modules, now))
      continue;
    else
      rank = 2;
    if (rank < best_rank || (rank == best_rank && pm->expected_ms > r->p->mods[best].expected_ms)) {
      best = (long)r->pending[k];
      best_rank = rank;
      best_plan = bp;
      at = k;
    }
  }
  if (best < 0)
    return -1;
  r->pending[at] = r->pending[--r->npending];
  *create = best_rank == 1;
  if (*create)
    best_plan->started++;
  return best;
}
