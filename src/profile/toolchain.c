/* Toolchain processes into compiles. A compile is what a compiler proper does (cc1plus, cicc,
 * ptxas, ld ...), whichever driver, wrapper or cache runs it: a `#!/bin/sh` g++ that execs
 * g++-real, ccache, a target-prefixed gcc. From each compiler proper that made code, the report
 * climbs through the processes above it (earlier images of its own pid first, then its
 * ancestors) to each that names one of the same files — ccache and g++ both name x.cpp, cicc
 * names nvcc's input — and the outermost is the compile, with its wall and CPU time (a process
 * that execs is one compile, named for its wrapper script if it was one, else for what it became). Processes
 * on no such chain (a `gcc -E` ccache ran, a shell, the build tool) are no compiles. The names
 * of drivers and wrappers are never looked at: only what they run and what they name. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "profile/model.h"
#include "profile/record_fields.h"

/* Whether two tools' arguments name a file in common (each path list '\n'-terminated). */
static bool shares(const pf_compile *a, const pf_compile *b)
{
  if (!a->paths || !b->paths)
    return false;
  for (const char *x = a->paths; *x;) {
    const char *end = strchr(x, '\n');
    size_t n = (size_t)(end - x);
    for (const char *y = b->paths; *y;) {
      const char *e2 = strchr(y, '\n');
      if ((size_t)(e2 - y) == n && !memcmp(x, y, n))
        return true;
      y = e2 + 1;
    }
    x = end + 1;
  }
  return false;
}

typedef struct {
  gpujit_profile *p;
  size_t *tools, n; /* the tools' indices, by pid and start */
} chain_ctx;

static int by_pid_t0(const void *a, const void *b, void *ctx)
{
  const pf_compile *v = ctx, *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
  if (x->pid != y->pid)
    return (x->pid > y->pid) - (x->pid < y->pid);
  return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* The image of process `pid` that was running at `t`: its latest tool record starting no later;
 * -1 when none. */
static long image_of(const chain_ctx *x, int pid, uint64_t t)
{
  size_t lo = 0, hi = x->n;
  long best = -1;
  while (lo < hi) { /* the first tool of pid */
    size_t mid = (lo + hi) / 2;
    if (x->p->compiles.v[x->tools[mid]].pid < pid)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo; i < x->n && x->p->compiles.v[x->tools[i]].pid == pid; i++) {
    const pf_compile *c = &x->p->compiles.v[x->tools[i]];
    if (c->t0 <= t)
      best = (long)x->tools[i];
  }
  return best;
}

/* The process above tool `i` that runs it as part of the same compile, or -1. */
static long above(const chain_ctx *x, size_t i)
{
  const pf_compile *c = &x->p->compiles.v[i];
  long k;
  for (int a = 0; a < c->nanc; a++) /* processes between that name none of its files are launchers */
    if ((k = image_of(x, c->anc[a], c->t0)) >= 0 && shares(&x->p->compiles.v[k], c))
      return k;
  return -1;
}

/* The outer compile takes what its process's later images did: their end, CPU time, status and
 * output (the wrapper exec'd the driver, which wrote it). */
static void merge_image(pf_compile *outer, const pf_compile *img)
{
  if (!outer->script) { /* `env -i ... ptxas`, `nice gcc`: named for what it became */
    char *name = pf_dup(img->name);
    if (name) {
      free(outer->name);
      outer->name = name;
      memcpy(outer->kind, img->kind, sizeof(outer->kind));
      outer->script = img->script;
    }
  }
  if (img->t1 > outer->t1)
    outer->t1 = img->t1;
  if (img->cpu_ns > outer->cpu_ns)
    outer->cpu_ns = img->cpu_ns;
  if (img->ended) {
    outer->ended = true;
    outer->result = img->result;
    outer->own_result = img->own_result;
  }
  if (img->cubin_hash[0] && !outer->cubin_hash[0]) {
    memcpy(outer->cubin_hash, img->cubin_hash, sizeof(outer->cubin_hash));
    outer->cubin_bytes = img->cubin_bytes;
  }
  if (img->fatbins && img->fatbins[0] && (!outer->fatbins || !outer->fatbins[0])) {
    free(outer->fatbins);
    outer->fatbins = pf_dup(img->fatbins);
  }
}

void gpujit__profile_toolchain(gpujit_profile *p)
{
  size_t n = p->compiles.n, kept = 0;
  chain_ctx x = {p, malloc(n * sizeof(size_t) + 1), 0};
  long *into = malloc(n * sizeof(long) + 1); /* a later image merged into its process's first */
  char *keep = calloc(n + 1, 1);
  if (!x.tools || !keep || !into) {
    free(x.tools), free(keep), free(into);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    into[i] = -1;
    if (p->compiles.v[i].tool)
      x.tools[x.n++] = i;
    else
      keep[i] = 1;
  }
  qsort_r(x.tools, x.n, sizeof(*x.tools), by_pid_t0, p->compiles.v);
  for (size_t t = 1; t < x.n; t++) { /* one process, two images naming the same files: one compile */
    size_t i = x.tools[t], prev = x.tools[t - 1];
    if (p->compiles.v[prev].pid == p->compiles.v[i].pid && shares(&p->compiles.v[prev], &p->compiles.v[i])) {
      into[i] = into[prev] >= 0 ? into[prev] : (long)prev;
      merge_image(&p->compiles.v[into[i]], &p->compiles.v[i]);
    }
  }
  for (size_t t = 0; t < x.n; t++) {
    long cur = (long)x.tools[t], up;
    const pf_compile *c = &p->compiles.v[cur];
    if (!c->proper || c->pre)
      continue;
    for (size_t steps = 0; steps < 64; steps++) {
      if (into[cur] >= 0)
        cur = into[cur];
      if (keep[cur]) /* climbed before, from another compiler proper of this compile */
        break;
      keep[cur] = 1;
      if ((up = above(&x, (size_t)cur)) < 0)
        break;
      cur = up;
    }
  }
  for (size_t i = 0; i < n; i++) {
    if (keep[i])
      p->compiles.v[kept++] = p->compiles.v[i];
    else
      gpujit__profile_compile_free(&p->compiles.v[i]);
  }
  p->compiles.n = kept;
  for (size_t i = 0; i < p->procs.n; i++) /* indices into compiles are no longer those of reading */
    p->procs.v[i].tool = -1;
  free(x.tools), free(keep), free(into);
}
