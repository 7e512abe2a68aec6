/* Kernel regions analysed, shared by the library (timing/kregions.c) and the injection library
 * (inject/kregions.c, which may use nothing else of gpujit): raw events of gpujit/regions.cuh
 * paired per unit into calls, and each region's cycles, times, share of the kernel and imbalance
 * across SMs and units. Static functions over the public types alone: no symbol of gpujit, so the
 * injection library compiles them in; each failure is -1 (out of memory), which the library's
 * wrapper names. */
#ifndef GPUJIT_INJECT_KREGIONS_ANALYZE_H
#define GPUJIT_INJECT_KREGIONS_ANALYZE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpujit/regions.h"

typedef struct kra_ev {
  uint64_t name, clk, gt;
  uint32_t unit, sm, launch; /* launch: %gridid's low 15 bits, so two launches' units stay apart */
  int end;
  size_t order; /* in the buffer: a unit's events are in the order it wrote them */
} kra_ev;

typedef struct kra_open_call {
  uint32_t region;
  const kra_ev *begin;
} kra_open_call;

/* The kra_names seen, each a region, in the order first seen. */
typedef struct kra_names {
  gpujit_region_stat *rows;
  size_t count, cap;
  const gpujit_region_name *table;
  size_t ntable;
} kra_names;

static inline int kra_cmp_ev(const void *a, const void *b)
{
  const kra_ev *x = a, *y = b;
  if (x->launch != y->launch)
    return x->launch < y->launch ? -1 : 1;
  if (x->unit != y->unit)
    return x->unit < y->unit ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

static inline int kra_cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The region of a recorded address: by its name, so the same literal at two places (two
 * addresses) is one region. */
static inline int kra_region_of(kra_names *n, uint64_t addr, uint32_t *out)
{
  char text[128];
  const char *name = NULL;
  for (size_t i = 0; i < n->ntable && !name; i++)
    if (n->table[i].addr == addr)
      name = n->table[i].name;
  if (!name) {
    snprintf(text, sizeof(text), "0x%llx", (unsigned long long)addr);
    name = text;
  }
  for (size_t i = 0; i < n->count; i++)
    if (strncmp(n->rows[i].name, name, sizeof(n->rows[i].name) - 1) == 0) {
      *out = (uint32_t)i;
      return 0;
    }
  if (n->count == n->cap) {
    size_t cap = n->cap ? 2 * n->cap : 16;
    gpujit_region_stat *rows = realloc(n->rows, cap * sizeof(*rows));
    if (!rows)
      return -1;
    n->rows = rows, n->cap = cap;
  }
  memset(&n->rows[n->count], 0, sizeof(n->rows[0]));
  snprintf(n->rows[n->count].name, sizeof(n->rows[0].name), "%s", name);
  n->rows[n->count].depth = UINT32_MAX;
  *out = (uint32_t)n->count++;
  return 0;
}

static inline void kra_decode(kra_ev *e, const uint64_t *w, size_t i)
{
  e->name = w[0], e->clk = w[1], e->gt = w[2];
  e->unit = (uint32_t)(w[3] & 0xffffffffu);
  e->sm = (uint32_t)((w[3] >> 32) & 0xffffu);
  e->launch = (uint32_t)((w[3] >> 48) & 0x7fffu);
  e->end = (int)(w[3] >> 63);
  e->order = i;
}

/* Whether d ns can be `cycles` of an SM clock between 0.2 and 4 GHz. */
static inline int kra_plausible_ns(int64_t d, uint64_t cycles)
{
  return d >= (int64_t)(cycles / 4) && (uint64_t)d <= cycles * 5;
}

/* A slice's nanoseconds. The device reads %globaltimer as its two 32-bit halves, so a carry between
 * them (a window of a few cycles once every 4.29 s) can put one event 2^32 ns off: a duration its
 * cycles rule out that 2^32 ns mends into one they allow is mended; any other stays as read (0
 * where below 0). */
static inline uint64_t kra_slice_ns(uint64_t begin_ns, uint64_t end_ns, uint64_t cycles)
{
  const int64_t wrap = (int64_t)1 << 32;
  int64_t d = (int64_t)(end_ns - begin_ns);
  if (d < 0 || (d > wrap / 2 && !kra_plausible_ns(d, cycles)))
    for (int k = -1; k <= 1; k += 2) {
      int64_t m = d + k * wrap;
      if (kra_plausible_ns(m, cycles))
        return (uint64_t)m;
    }
  return d > 0 ? (uint64_t)d : 0;
}

/* One unit's events (sorted, [a, b)) paired into slices: an end closes the innermost open begin
 * of its name, wherever it lies in the stack (the lanes of a diverged warp interleave their
 * regions); an end that matches none, and begins left open, are unmatched. */
static inline int kra_pair_unit(gpujit_region_report *r, kra_names *n, const kra_ev *evs, size_t a, size_t b, kra_open_call *stack)
{
  size_t depth = 0;
  int err;
  for (size_t i = a; i < b; i++) {
    uint32_t reg = 0;
    if ((err = kra_region_of(n, evs[i].name, &reg)) < 0)
      return err;
    if (!evs[i].end) {
      stack[depth].region = reg, stack[depth].begin = &evs[i];
      depth++;
      continue;
    }
    size_t k = depth;
    while (k > 0 && stack[k - 1].region != reg)
      k--;
    if (k == 0) {
      r->unmatched++;
      continue;
    }
    const kra_ev *bg = stack[k - 1].begin;
    memmove(&stack[k - 1], &stack[k], (depth - k) * sizeof(*stack));
    depth--;
    gpujit_region_slice *s = &r->slices[r->nslices++];
    s->region = reg, s->sm = evs[i].sm, s->unit = evs[i].unit, s->depth = (uint32_t)(k - 1);
    s->launch = evs[i].launch;
    s->cycles = evs[i].clk >= bg->clk ? evs[i].clk - bg->clk : 0;
    s->dur_ns = kra_slice_ns(bg->gt, evs[i].gt, s->cycles);
    s->start_ns = bg->gt;
    if (s->dur_ns != (evs[i].gt >= bg->gt ? evs[i].gt - bg->gt : 0) && evs[i].gt >= s->dur_ns)
      s->start_ns = evs[i].gt - s->dur_ns; /* mended: placed by its end */
    if (n->rows[reg].depth > k - 1)
      n->rows[reg].depth = (unsigned)(k - 1);
  }
  r->unmatched += depth;
  return 0;
}

static inline double kra_pct(const uint64_t *sorted, size_t n, double p)
{
  size_t k = (size_t)(p * (double)n + 0.999999); /* nearest rank */
  return (double)sorted[k ? (k > n ? n : k) - 1 : 0];
}

/* max over mean of per-key sums; keys[i] groups vals[i]. */
static inline double kra_imbalance(uint32_t *keys, const uint64_t *vals, size_t n, unsigned *groups)
{
  double sum = 0, best = 0, cur = 0;
  size_t ng = 0;
  /* keys are sorted together with vals by the caller's order: sort pairs here */
  uint64_t *pairs = malloc(n * sizeof(*pairs) * 2);
  if (!pairs || n == 0) {
    free(pairs);
    *groups = 0;
    return 0;
  }
  for (size_t i = 0; i < n; i++)
    pairs[2 * i] = keys[i], pairs[2 * i + 1] = vals[i];
  qsort(pairs, n, 2 * sizeof(uint64_t), kra_cmp_u64);
  for (size_t i = 0; i < n; i++) {
    cur += (double)pairs[2 * i + 1];
    sum += (double)pairs[2 * i + 1];
    if (i + 1 == n || pairs[2 * i + 2] != pairs[2 * i]) {
      if (cur > best)
        best = cur;
      cur = 0;
      ng++;
    }
  }
  free(pairs);
  *groups = (unsigned)ng;
  return sum > 0 ? best / (sum / (double)ng) : 1;
}

/* How many (launch, unit) pairs ran region `reg`. */
static inline uint64_t kra_unit_launches(const gpujit_region_report *r, uint32_t reg)
{
  uint64_t *keys = malloc((r->nslices + 1) * sizeof(*keys)), n = 0, distinct = 0;
  if (!keys)
    return 0;
  for (size_t i = 0; i < r->nslices; i++)
    if (r->slices[i].region == reg)
      keys[n++] = (uint64_t)r->slices[i].launch << 32 | r->slices[i].unit;
  qsort(keys, (size_t)n, sizeof(*keys), kra_cmp_u64);
  for (uint64_t i = 0; i < n; i++)
    distinct += i == 0 || keys[i] != keys[i - 1];
  free(keys);
  return distinct;
}

/* One region's figures from its slices. */
static inline int kra_region_stats(gpujit_region_report *r, uint32_t reg)
{
  gpujit_region_stat *st = &r->regions[reg];
  size_t n = 0;
  uint64_t *cyc, *ns, *vals;
  uint32_t *sm, *unit;
  double csum = 0, nsum = 0;
  for (size_t i = 0; i < r->nslices; i++)
    n += r->slices[i].region == reg;
  st->calls = n;
  st->share = -1;
  if (n == 0) { /* only unmatched events */
    st->depth = 0;
    return 0;
  }
  cyc = malloc(n * sizeof(*cyc)), ns = malloc(n * sizeof(*ns)), vals = malloc(n * sizeof(*vals));
  sm = malloc(n * sizeof(*sm)), unit = malloc(n * sizeof(*unit));
  if (!cyc || !ns || !vals || !sm || !unit) {
    free(cyc), free(ns), free(vals), free(sm), free(unit);
    return -1;
  }
  n = 0;
  for (size_t i = 0; i < r->nslices; i++)
    if (r->slices[i].region == reg) {
      cyc[n] = vals[n] = r->slices[i].cycles, ns[n] = r->slices[i].dur_ns;
      sm[n] = r->slices[i].sm, unit[n] = r->slices[i].unit;
      csum += (double)cyc[n], nsum += (double)ns[n];
      n++;
    }
  st->sm_imbalance = kra_imbalance(sm, vals, n, &st->sms);
  st->unit_imbalance = kra_imbalance(unit, vals, n, &st->units);
  qsort(cyc, n, sizeof(*cyc), kra_cmp_u64);
  qsort(ns, n, sizeof(*ns), kra_cmp_u64);
  st->cycles_mean = csum / (double)n, st->ns_mean = nsum / (double)n;
  st->cycles_median = kra_pct(cyc, n, 0.5), st->ns_median = kra_pct(ns, n, 0.5);
  st->cycles_p99 = kra_pct(cyc, n, 0.99), st->ns_p99 = kra_pct(ns, n, 0.99);
  st->cycles_max = (double)cyc[n - 1], st->ns_max = (double)ns[n - 1];
  st->total_ns = nsum;
  /* each unit runs once per launch: its time over every launch against theirs summed */
  /* a unit's time in the region in one launch over one launch's time: the mean over the unit
   * launches that ran it (each (launch, unit) once), against the launches' mean duration */
  if (r->kernel_ns > 0 && r->launches > 0) {
    uint64_t runs = kra_unit_launches(r, reg);
    if (runs)
      st->share = nsum / (double)runs / (r->kernel_ns / (double)r->launches);
  }
  free(cyc), free(ns), free(vals), free(sm), free(unit);
  return 0;
}

static inline int kra_pair_all(gpujit_region_report *r, kra_names *n, kra_ev *evs, size_t nev)
{
  kra_open_call *stack = malloc((nev + 1) * sizeof(*stack));
  int err = 0;
  if (!stack)
    return -1;
  if (nev) /* (no array at all when no event was recorded) */
    qsort(evs, nev, sizeof(*evs), kra_cmp_ev);
  for (size_t a = 0, b; a < nev && err == 0; a = b) {
    for (b = a; b < nev && evs[b].unit == evs[a].unit && evs[b].launch == evs[a].launch; b++)
      ;
    err = kra_pair_unit(r, n, evs, a, b, stack);
  }
  free(stack);
  return err;
}

static inline void kra_report_free(gpujit_region_report *r)
{
  if (!r)
    return;
  free(r->regions);
  free(r->slices);
  free(r);
}

/* gpujit_regions_analyze's work, its arguments checked by the caller: 0, or -1 out of memory. */
static inline int kra_analyze(gpujit_region_report **out, const uint64_t *events, size_t nevents, uint64_t dropped,
                              const gpujit_region_name *names_in, size_t nnames, double kernel_ns, unsigned launches,
                              gpujit_region_scope scope)
{
  gpujit_region_report *r;
  kra_names n = {NULL, 0, 0, names_in, names_in ? nnames : 0};
  kra_ev *evs = NULL;
  int err = 0;
  *out = NULL;
  if (!(r = calloc(1, sizeof(*r))) || (nevents && !(evs = malloc(nevents * sizeof(*evs)))) ||
      (nevents && !(r->slices = malloc((nevents / 2 + 1) * sizeof(*r->slices))))) {
    free(evs);
    kra_report_free(r);
    return -1;
  }
  r->events = nevents, r->dropped = dropped, r->launches = launches ? launches : 1;
  r->kernel_ns = kernel_ns > 0 ? kernel_ns : 0, r->scope = scope;
  for (size_t i = 0; i < nevents; i++)
    kra_decode(&evs[i], events + (size_t)GPUJIT_REGIONS_EVENT_WORDS * i, i);
  err = kra_pair_all(r, &n, evs, nevents);
  free(evs);
  r->regions = n.rows, r->count = n.count;
  for (size_t i = 0; i < r->nslices; i++)
    if (r->min_call_cycles == 0 || r->slices[i].cycles < r->min_call_cycles)
      r->min_call_cycles = r->slices[i].cycles;
  for (uint32_t k = 0; err == 0 && k < r->count; k++)
    err = kra_region_stats(r, k);
  if (err < 0) {
    kra_report_free(r);
    return -1;
  }
  *out = r;
  return 0;
}

/* The distinct name addresses of `n` events, each given its text (at most `bytes`, NUL-ended) by
 * `read`: the names the analysis takes. @return how many, or -1 (out of memory, nothing kept). */
typedef void (*kra_read_name)(void *ctx, uint64_t addr, char *out);

static inline long kra_names_of(const uint64_t *ev, size_t n, size_t bytes, kra_read_name read, void *ctx,
                                gpujit_region_name **out, char **text)
{
  gpujit_region_name *names = NULL;
  char *t = NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t a = ev[(size_t)GPUJIT_REGIONS_EVENT_WORDS * i];
    size_t j = 0;
    while (j < k && names[j].addr != a)
      j++;
    if (j < k)
      continue;
    gpujit_region_name *gn = realloc(names, (k + 1) * sizeof(*names));
    char *gt = gn ? realloc(t, (k + 1) * bytes) : NULL;
    if (gn)
      names = gn;
    if (!gt) {
      free(names), free(t);
      return -1;
    }
    t = gt;
    names[k].addr = a;
    read(ctx, a, t + k * bytes);
    k++;
  }
  for (size_t j = 0; j < k; j++) /* pointers once the text stopped moving */
    names[j].name = t + j * bytes;
  *out = names, *text = t;
  return (long)k;
}

#endif
