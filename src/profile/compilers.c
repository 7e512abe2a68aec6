/* Compilers inside compilers: a framework's compile (an adapter's unit: a jitted function, a
 * kernel specialization, a graph) runs other compilers — ptxas and nvlink as processes, another
 * framework's compiles, NVRTC or libNVVM in the process — and a compiler driver (nvcc) runs
 * its own tools. The report counts each millisecond once, in the outermost compile, with the
 * inner ones as its parts; modules are tied to that outermost compile, whichever inner compiler
 * wrote the bytes; and the run's JIT time is given per compiler. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "profile/model.h"

#define SLACK_NS 2000000ull /* a toolchain process's start and end against its parent's: 2 ms either side */

/* Whether compile `c` ran inside `d`: within its span, and in its process (on its thread: another
 * thread's compiles in the meantime are the program's own) or in a process it started. */
static bool inside(const pf_compile *c, const pf_compile *d)
{
  uint64_t slack = c->tool ? SLACK_NS : 0; /* a process's own clock reads against its parent's */
  if (c == d || !(d->unit || d->tool) || c->t0 + slack < d->t0 || c->t1 > d->t1 + slack)
    return false;
  if (c->pid == d->pid)
    return d->unit && (c->tid == d->tid || c->tool);
  return gpujit__profile_descends(c->anc, c->nanc, d->pid);
}

static void stages(gpujit_profile *p);

void gpujit__profile_nest(gpujit_profile *p)
{
  size_t *holders = malloc(p->compiles.n * sizeof(*holders) + 1), nh = 0; /* units and tools: few */
  for (size_t k = 0; holders && k < p->compiles.n; k++)
    if (p->compiles.v[k].unit || p->compiles.v[k].tool)
      holders[nh++] = k;
  for (size_t i = 0; i < p->compiles.n; i++) {
    pf_compile *c = &p->compiles.v[i];
    uint64_t own = c->t1 - c->t0, best = UINT64_MAX;
    c->parent = -1;
    for (size_t h = 0; h < nh; h++) {
      size_t k = holders[h];
      const pf_compile *d = &p->compiles.v[k];
      uint64_t span = d->t1 - d->t0;
      /* the innermost container, longer than c (of equal spans, the earlier record): no cycles */
      if ((span > own || (span == own && k < i)) && span < best && inside(c, d)) {
        best = span;
        c->parent = (int)k;
      }
    }
  }
  free(holders);
  stages(p);
}

/* A tool outside every compile whose input was made from a compile's output (its parent said so:
 * GPUJIT_PROFILE_FROM_HASH) is a later stage of that compile: gpujit's ptxas, given the lean PTX
 * made from NVRTC's, after NVRTC returned. The compile is one that wrote that output, in a process
 * the tool descends from (or its own), ended before the tool began — the latest such. */
static void stages(gpujit_profile *p)
{
  for (size_t i = 0; i < p->compiles.n; i++) {
    pf_compile *c = &p->compiles.v[i];
    long best = -1;
    c->stage_of = -1;
    if (!c->tool || !c->from_hash[0] || c->parent >= 0)
      continue;
    for (size_t k = 0; k < p->compiles.n; k++) {
      const pf_compile *d = &p->compiles.v[k];
      if (k == i || d->tool || d->result != 0 || strcmp(d->ptx_hash, c->from_hash) != 0 ||
          d->t1 > c->t0 + SLACK_NS || (d->pid != c->pid && !gpujit__profile_descends(c->anc, c->nanc, d->pid)))
        continue;
      if (best < 0 || d->t1 > p->compiles.v[best].t1)
        best = (long)k;
    }
    c->stage_of = (int)best;
  }
}

const pf_compile *gpujit__profile_top(const gpujit_profile *p, const pf_compile *c)
{
  size_t steps = 0;
  while (c && (c->parent >= 0 || c->stage_of >= 0) && steps++ < p->compiles.n)
    c = &p->compiles.v[c->parent >= 0 ? c->parent : c->stage_of];
  return c;
}

bool gpujit__profile_made(const pf_compile *c, const char *hash, bool embedded)
{
  size_t n = strlen(hash);
  if (!n || c->result != 0)
    return false;
  if (!strcmp(c->cubin_hash, hash) || !strcmp(c->ptx_hash, hash))
    return true;
  for (const char *f = c->fatbins; embedded && f && *f; f = strchr(f, ' ') + 1) /* each hash followed by ' ' */
    if (!strncmp(f, hash, n) && f[n] == ' ')
      return true;
  return false;
}

/* The compile whose output is `hash`: of those that wrote it, the latest before `before` (else
 * any); else of those whose object or library embeds it as a fatbin, the first — nvcc made it,
 * the link that built a library from nvcc's object copied it. */
static const pf_compile *by_hash(const gpujit_profile *p, const char *hash, uint64_t before)
{
  const pf_compile *best = NULL;
  if (!hash[0])
    return NULL;
  for (size_t i = 0; i < p->compiles.n; i++) {
    const pf_compile *c = &p->compiles.v[i];
    if (!gpujit__profile_made(c, hash, false))
      continue;
    if (!best || (c->t1 <= before && (best->t1 > before || c->t1 > best->t1)))
      best = c;
  }
  for (size_t i = 0; i < p->compiles.n && !best; i++) /* compiles in order of their records: by start */
    if (gpujit__profile_made(&p->compiles.v[i], hash, true))
      best = &p->compiles.v[i];
  for (size_t i = 0; i < p->compiles.n; i++) {
    const pf_compile *c = &p->compiles.v[i];
    if (best && !gpujit__profile_made(best, hash, false) && c->t0 < best->t0 && gpujit__profile_made(c, hash, true))
      best = c;
  }
  return best;
}

/* A framework that loads its module inside its own compile: the innermost
 * framework compile of that thread whose span holds the load. An autotuner compiles nothing: a
 * library its benchmarks load lazily (the cache flush's) is not its. */
static const pf_compile *by_span(const gpujit_profile *p, const pf_load *l)
{
  const pf_compile *best = NULL;
  for (size_t i = 0; i < p->compiles.n; i++) {
    const pf_compile *c = &p->compiles.v[i];
    if (c->unit && !c->autotune && c->pid == l->pid && c->tid == l->tid && l->t0 >= c->t0 && l->t1 <= c->t1 &&
        (!best || c->t1 - c->t0 < best->t1 - best->t0))
      best = c;
  }
  return best;
}

const pf_compile *gpujit__profile_maker(const gpujit_profile *p, const pf_load *l)
{
  const pf_compile *c = by_hash(p, l->hash, l->t0);
  for (size_t i = 0; i < p->compiles.n && !c && l->handle; i++) {
    const pf_compile *u = &p->compiles.v[i];
    if (u->unit && u->handle == l->handle && u->bind_pid == l->pid)
      c = u;
  }
  if (!c)
    c = by_span(p, l);
  return c ? gpujit__profile_top(p, c) : NULL;
}

/* The compilers the program waited for first (their own time), then those inside them. */
static int by_time(const void *a, const void *b)
{
  const gpujit_profile_compiler *x = a, *y = b;
  if (x->ms != y->ms)
    return (x->ms < y->ms) - (x->ms > y->ms);
  return (x->within_ms < y->within_ms) - (x->within_ms > y->within_ms);
}

int gpujit__profile_compilers(gpujit_profile *p)
{
  for (size_t i = 0; i < p->compiles.n; i++) {
    const pf_compile *c = &p->compiles.v[i];
    gpujit_profile_compiler *r = NULL;
    double d = pf_compile_ms(c);
    for (size_t k = 0; k < p->ncompilers && !r; k++)
      if (!strcmp(p->compilers[k].compiler, c->kind))
        r = &p->compilers[k];
    if (!r) {
      gpujit_profile_compiler *g = realloc(p->compilers, (p->ncompilers + 1) * sizeof(*g));
      if (!g)
        return gpujit__error(GPUJIT_ENOMEM, "out of memory");
      p->compilers = g;
      r = &p->compilers[p->ncompilers++];
      memset(r, 0, sizeof(*r));
      r->compiler = c->kind;
    }
    if (c->parent >= 0)
      r->within++, r->within_ms += d;
    else
      r->compiles++, r->ms += d;
    r->cache_hits += !strcmp(c->cache, "hit");
    r->failed += c->result != 0;
    r->cpu_ms += (double)c->cpu_ns / 1e6;
  }
  if (p->ncompilers > 1)
    qsort(p->compilers, p->ncompilers, sizeof(*p->compilers), by_time);
  return 0;
}
