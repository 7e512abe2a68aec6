/* Comparing two sets of compile traces: modules matched by name, each side's samples of a module
 * summarised by their median and range, every table's rows compared, and the gate's verdict. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "trace/analyze.h"

#define NTABLES GPUJIT_TRACE_TABLE_COUNT
/* A change under this fraction of its base is no change, measured noise or not. */
#define RESOLUTION 0.005

typedef struct row_list {
  gpujit_trace_diff_row *rows;
  size_t count, cap;
} row_list;

struct gpujit_trace_diff {
  row_list tables[NTABLES];
  gpujit_trace_diff_row total;
  gpujit__strvec names; /* the rows' names */
  gpujit_trace_diff_verdict verdict;
};

/* One side's builds of one module: indices into the analysis's modules. */
typedef struct group {
  const char *name;
  size_t *idx;
  size_t count, cap;
  size_t unmeasured; /* hits without a record */
} group;

typedef struct side {
  const gpujit_trace_analysis *a;
  group *groups;
  size_t count, cap;
  gpujit__rows value[NTABLES], spread[NTABLES]; /* per row name: sums over modules */
  double floor_us[NTABLES]; /* a row under this may be missing from a recorded profile */
  unsigned min_samples[NTABLES];
} side;

const char *gpujit_trace_change_name(gpujit_trace_change c)
{
  static const char *const names[] = {"same", "slower", "faster", "added", "removed", "unmeasured"};
  return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "unknown";
}

int gpujit_trace_diff_options_init(gpujit_trace_diff_options *opts, unsigned int version)
{
  static const gpujit_trace_diff_options init = GPUJIT_TRACE_DIFF_OPTIONS_INIT;
  if (!opts)
    return gpujit__error(GPUJIT_EINVAL, "options: NULL");
  if (version != GPUJIT_TRACE_DIFF_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "trace diff options version %u is not supported", version);
  *opts = init;
  return 0;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
  qsort(v, n, sizeof(*v), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Two samples are one when both replay the same record of the same cache entry. */
static bool same_record(const gpujit__profile *a, const gpujit__profile *b)
{
  return a->recorded && b->recorded && a->key && b->key && a->recorded_at && b->recorded_at &&
         strcmp(a->key, b->key) == 0 && strcmp(a->recorded_at, b->recorded_at) == 0;
}

static int group_modules(side *s)
{
  for (size_t i = 0; i < s->a->nmodules; i++) {
    const gpujit__profile *p = &s->a->modules[i];
    group *g = NULL;
    size_t *idx;
    bool dup = false;
    for (size_t k = 0; k < s->count && !g; k++)
      if (strcmp(s->groups[k].name, p->module) == 0)
        g = &s->groups[k];
    if (!g) {
      if (!(g = gpujit__grow(s->groups, &s->cap, s->count, sizeof(*g), 16)))
        return GPUJIT_ENOMEM;
      s->groups = g;
      g = &s->groups[s->count++];
      memset(g, 0, sizeof(*g));
      g->name = p->module;
    }
    if (p->compile_us < 0) {
      g->unmeasured++;
      continue;
    }
    for (size_t k = 0; k < g->count && !dup; k++)
      dup = same_record(&s->a->modules[g->idx[k]], p);
    if (dup)
      continue;
    if (!(idx = gpujit__grow(g->idx, &g->cap, g->count, sizeof(*idx), 4)))
      return GPUJIT_ENOMEM;
    g->idx = idx;
    g->idx[g->count++] = i;
  }
  return 0;
}

static const group *find_group(const side *s, const char *name)
{
  for (size_t k = 0; k < s->count; k++)
    if (strcmp(s->groups[k].name, name) == 0)
      return &s->groups[k];
  return NULL;
}

/* A row of a module's samples: median and range into `value` and `spread`. */
static void summarise(const side *s, const group *g, int t, const char *row, double *vals, double *med, double *range)
{
  for (size_t k = 0; k < g->count; k++) {
    const gpujit__profile *p = &s->a->modules[g->idx[k]];
    const gpujit_trace_stat *r;
    if (t == GPUJIT_TRACE_MODULES) {
      vals[k] = p->compile_us;
    } else {
      r = gpujit__rows_find(&p->tables[t], row);
      vals[k] = r ? r->total_us : 0;
    }
  }
  *med = median(vals, g->count);
  *range = vals[g->count - 1] - vals[0];
}

/* Every table row of every measured module: the side's sums of medians and ranges. */
static int side_tables(side *s)
{
  double *vals = NULL;
  size_t most = 1;
  int err = 0;
  for (size_t k = 0; k < s->count; k++)
    most = s->groups[k].count > most ? s->groups[k].count : most;
  if (!(vals = calloc(most, sizeof(*vals))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (int t = 0; t < NTABLES; t++)
    s->min_samples[t] = 0;
  for (size_t k = 0; k < s->count && err == 0; k++) {
    const group *g = &s->groups[k];
    if (!g->count)
      continue;
    for (int t = 0; t < GPUJIT__PROFILE_TABLES && err == 0; t++) {
      gpujit__rows seen = {0};
      if (!s->min_samples[t] || g->count < s->min_samples[t])
        s->min_samples[t] = (unsigned)g->count;
      for (size_t j = 0; j < g->count; j++)
        if (s->a->modules[g->idx[j]].floor_us[t] > s->floor_us[t])
          s->floor_us[t] = s->a->modules[g->idx[j]].floor_us[t];
      for (size_t j = 0; j < g->count && err == 0; j++) {
        const gpujit__rows *rows = &s->a->modules[g->idx[j]].tables[t];
        for (size_t r = 0; r < rows->count && err == 0; r++) {
          const char *name = rows->rows[r].name;
          double med, range;
          if (gpujit__rows_find(&seen, name))
            continue;
          if ((err = gpujit__rows_add(&seen, name, 0, 0, 1)) < 0)
            break;
          summarise(s, g, t, name, vals, &med, &range);
          if ((err = gpujit__rows_add(&s->value[t], name, med, med, 1)) == 0)
            err = gpujit__rows_add(&s->spread[t], name, range, range, 1);
        }
      }
      gpujit__rows_free(&seen);
    }
  }
  free(vals);
  return err;
}

/* P(U >= u) for the Mann-Whitney statistic of m against n samples when both come from one
 * distribution: exact counts for small samples, the normal approximation beyond. */
static double mw_tail(size_t m, size_t n, double u)
{
  size_t umax = m * n;
  double total = 0, above = 0, *prev, *cur;
  if (m + n > 60) {
    double mu = (double)umax / 2, sigma = sqrt((double)m * (double)n * (double)(m + n + 1) / 12.0);
    return 0.5 * erfc((u - mu - 0.5) / sigma / sqrt(2.0));
  }
  /* f[j][v]: arrangements of i of one kind and j of the other with U = v. */
  prev = calloc((n + 1) * (umax + 1), sizeof(*prev));
  cur = calloc((n + 1) * (umax + 1), sizeof(*cur));
  if (!prev || !cur) {
    free(prev);
    free(cur);
    return -1;
  }
  for (size_t i = 0; i <= m; i++) {
    for (size_t j = 0; j <= n; j++) {
      for (size_t v = 0; v <= umax; v++) {
        double x;
        if (i == 0 || j == 0) {
          x = v == 0;
        } else {
          x = (v >= j ? prev[j * (umax + 1) + v - j] : 0) + cur[(j - 1) * (umax + 1) + v];
        }
        cur[j * (umax + 1) + v] = x;
      }
    }
    memcpy(prev, cur, (n + 1) * (umax + 1) * sizeof(*cur));
  }
  for (size_t v = 0; v <= umax; v++) {
    total += cur[n * (umax + 1) + v];
    if ((double)v >= u - 1e-9)
      above += cur[n * (umax + 1) + v];
  }
  free(prev);
  free(cur);
  return total > 0 ? above / total : -1;
}

/* The probability that the new samples sit this far above (or below) the base ones by chance. */
static double p_value(const side *b, const group *gb, const side *n, const group *gn, bool slower)
{
  double u = 0;
  for (size_t i = 0; i < gb->count; i++)
    for (size_t j = 0; j < gn->count; j++) {
      double x = b->a->modules[gb->idx[i]].compile_us, y = n->a->modules[gn->idx[j]].compile_us;
      u += slower ? (y > x) + 0.5 * (y == x) : (y < x) + 0.5 * (y == x);
    }
  return mw_tail(gb->count, gn->count, u);
}

static gpujit_trace_diff_row *new_row(gpujit_trace_diff *d, int t, const char *name)
{
  row_list *l = &d->tables[t];
  gpujit_trace_diff_row *r = gpujit__grow(l->rows, &l->cap, l->count, sizeof(*r), 32);
  if (!r)
    return NULL;
  l->rows = r;
  r = &l->rows[l->count];
  memset(r, 0, sizeof(*r));
  if (gpujit__strvec_push(&d->names, name) < 0)
    return NULL;
  r->name = d->names.items[d->names.count - 1]; /* each string stays where it is as the vector grows */
  r->p_value = -1;
  l->count++;
  return r;
}

/* Fill in the change from the values: within the measured spread is no change. */
static void classify(gpujit_trace_diff_row *r, bool in_base, bool in_new, const gpujit_trace_diff_options *o)
{
  r->delta_us = r->new_us - r->base_us;
  r->delta_pct = r->base_us > 0 ? 100.0 * r->delta_us / r->base_us : 0;
  if (in_base && !in_new)
    r->change = GPUJIT_TRACE_REMOVED;
  else if (!in_base && in_new)
    r->change = GPUJIT_TRACE_ADDED;
  else if (fabs(r->delta_us) <= (r->base_spread_us + r->new_spread_us) / 2 ||
           fabs(r->delta_us) <= RESOLUTION * r->base_us)
    r->change = GPUJIT_TRACE_SAME;
  else
    r->change = r->delta_us > 0 ? GPUJIT_TRACE_SLOWER : GPUJIT_TRACE_FASTER;
  r->regression = o->fail_above_pct >= 0 && r->change == GPUJIT_TRACE_SLOWER && r->delta_pct > o->fail_above_pct &&
                  r->delta_us >= o->min_ms * 1e3;
}

static int compare_modules(gpujit_trace_diff *d, const side *b, const side *n, const gpujit_trace_diff_options *o)
{
  double *vals;
  size_t most = 1;
  gpujit_trace_diff_verdict *v = &d->verdict;
  for (size_t k = 0; k < b->count; k++)
    most = b->groups[k].count > most ? b->groups[k].count : most;
  for (size_t k = 0; k < n->count; k++)
    most = n->groups[k].count > most ? n->groups[k].count : most;
  if (!(vals = calloc(most, sizeof(*vals))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  v->min_samples = 0;
  v->worst_p = -1;
  for (int pass = 0; pass < 2; pass++) {
    const side *s = pass ? n : b, *other = pass ? b : n;
    for (size_t k = 0; k < s->count; k++) {
      const group *g = &s->groups[k], *go = find_group(other, g->name);
      const group *gb = pass ? go : g, *gn = pass ? g : go;
      gpujit_trace_diff_row *r;
      double range;
      if (pass && go)
        continue; /* compared in the first pass */
      if (!(r = new_row(d, GPUJIT_TRACE_MODULES, g->name))) {
        free(vals);
        return gpujit__error(GPUJIT_ENOMEM, "out of memory");
      }
      if (gb && gb->count) {
        summarise(b, gb, GPUJIT_TRACE_MODULES, NULL, vals, &r->base_us, &range);
        r->base_spread_us = range;
        r->base_samples = (unsigned)gb->count;
      }
      if (gn && gn->count) {
        summarise(n, gn, GPUJIT_TRACE_MODULES, NULL, vals, &r->new_us, &range);
        r->new_spread_us = range;
        r->new_samples = (unsigned)gn->count;
      }
      if ((gb && !gb->count) || (gn && !gn->count)) {
        r->change = GPUJIT_TRACE_UNMEASURED;
        v->unmeasured++;
        continue;
      }
      classify(r, gb != NULL, gn != NULL, o);
      if (gb && gn) {
        unsigned fewest = r->base_samples < r->new_samples ? r->base_samples : r->new_samples;
        if (!v->min_samples || fewest < v->min_samples)
          v->min_samples = fewest;
        if (fewest >= 2 && r->delta_us != 0)
          r->p_value = p_value(b, gb, n, gn, r->delta_us > 0);
        d->total.base_us += r->base_us;
        d->total.new_us += r->new_us;
        d->total.base_spread_us += r->base_spread_us;
        d->total.new_spread_us += r->new_spread_us;
      } else {
        d->total.base_us += gb ? r->base_us : 0;
        d->total.new_us += gn ? r->new_us : 0;
      }
      v->slower += r->change == GPUJIT_TRACE_SLOWER;
      v->faster += r->change == GPUJIT_TRACE_FASTER;
      v->added += r->change == GPUJIT_TRACE_ADDED;
      v->removed += r->change == GPUJIT_TRACE_REMOVED;
      if (r->regression) {
        v->regressions++;
        if (r->p_value > v->worst_p)
          v->worst_p = r->p_value;
      }
    }
  }
  free(vals);
  d->total.base_samples = d->total.new_samples = v->min_samples;
  d->total.p_value = -1;
  classify(&d->total, true, true, o);
  v->total_regressed = d->total.regression;
  v->gated = o->fail_above_pct >= 0;
  v->failed = v->regressions > 0 || v->total_regressed;
  return 0;
}

static int compare_tables(gpujit_trace_diff *d, side *b, side *n, const gpujit_trace_diff_options *o)
{
  for (int t = 0; t < GPUJIT__PROFILE_TABLES; t++) {
    for (int pass = 0; pass < 2; pass++) {
      const gpujit__rows *rows = pass ? &n->value[t] : &b->value[t];
      for (size_t i = 0; i < rows->count; i++) {
        const char *name = rows->rows[i].name;
        const gpujit_trace_stat *vb = gpujit__rows_find(&b->value[t], name), *vn = gpujit__rows_find(&n->value[t], name);
        const gpujit_trace_stat *sb = gpujit__rows_find(&b->spread[t], name), *sn = gpujit__rows_find(&n->spread[t], name);
        gpujit_trace_diff_row *r;
        if (pass && vb)
          continue;
        /* Missing where a recorded profile left small rows out: not known, not removed. */
        if ((!vb && b->floor_us[t] > 0) || (!vn && n->floor_us[t] > 0))
          continue;
        if (!(r = new_row(d, t, name)))
          return gpujit__error(GPUJIT_ENOMEM, "out of memory");
        r->base_us = vb ? vb->total_us : 0;
        r->new_us = vn ? vn->total_us : 0;
        r->base_spread_us = sb ? sb->total_us : 0;
        r->new_spread_us = sn ? sn->total_us : 0;
        r->base_samples = b->min_samples[t];
        r->new_samples = n->min_samples[t];
        classify(r, vb && vb->total_us > 0, vn && vn->total_us > 0, o);
        if (!(vb && vb->total_us > 0) && !(vn && vn->total_us > 0))
          r->change = GPUJIT_TRACE_SAME;
        r->regression = 0; /* the gate is on modules and the total; tables explain them */
      }
    }
  }
  return 0;
}

static int cmp_delta(const void *pa, const void *pb)
{
  const gpujit_trace_diff_row *a = pa, *b = pb;
  if (fabs(a->delta_us) != fabs(b->delta_us))
    return fabs(a->delta_us) > fabs(b->delta_us) ? -1 : 1;
  return strcmp(a->name, b->name);
}

static void side_free(side *s)
{
  for (size_t k = 0; k < s->count; k++)
    free(s->groups[k].idx);
  free(s->groups);
  for (int t = 0; t < NTABLES; t++) {
    gpujit__rows_free(&s->value[t]);
    gpujit__rows_free(&s->spread[t]);
  }
}

int gpujit_trace_diff_create(gpujit_trace_diff **out, const gpujit_trace_analysis *base,
                             const gpujit_trace_analysis *next, const gpujit_trace_diff_options *opts)
{
  gpujit_trace_diff_options defaults = GPUJIT_TRACE_DIFF_OPTIONS_INIT;
  side b = {.a = base}, n = {.a = next};
  gpujit_trace_diff *d;
  int err;

  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_trace_diff_create: NULL out");
  *out = NULL;
  if (!base || !next)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_trace_diff_create: NULL analysis");
  if (!opts)
    opts = &defaults;
  if (opts->version != GPUJIT_TRACE_DIFF_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "trace diff options version %u is not supported", opts->version);
  if (!base->nmodules || !next->nmodules)
    return gpujit__error(GPUJIT_EINVAL, "the %s traces hold no module build: nothing to compare",
                         !base->nmodules ? "base" : "new");
  if (!(d = calloc(1, sizeof(*d))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((err = group_modules(&b)) < 0 || (err = group_modules(&n)) < 0 || (err = side_tables(&b)) < 0 ||
      (err = side_tables(&n)) < 0 || (err = compare_modules(d, &b, &n, opts)) < 0 ||
      (err = compare_tables(d, &b, &n, opts)) < 0)
    goto fail;
  d->total.name = "total";
  for (int t = 0; t < NTABLES; t++) {
    row_list *l = &d->tables[t];
    if (l->count)
      qsort(l->rows, l->count, sizeof(*l->rows), cmp_delta);
  }
  side_free(&b);
  side_free(&n);
  *out = d;
  return 0;
fail:
  side_free(&b);
  side_free(&n);
  gpujit_trace_diff_free(d);
  return err;
}

void gpujit_trace_diff_free(gpujit_trace_diff *d)
{
  if (!d)
    return;
  for (int t = 0; t < NTABLES; t++)
    free(d->tables[t].rows);
  gpujit__strvec_free(&d->names);
  free(d);
}

size_t gpujit_trace_diff_count(const gpujit_trace_diff *d, gpujit_trace_table t)
{
  return d && (unsigned)t < NTABLES ? d->tables[t].count : 0;
}

const gpujit_trace_diff_row *gpujit_trace_diff_row_at(const gpujit_trace_diff *d, gpujit_trace_table t, size_t i)
{
  return d && (unsigned)t < NTABLES && i < d->tables[t].count ? &d->tables[t].rows[i] : NULL;
}

const gpujit_trace_diff_row *gpujit_trace_diff_total(const gpujit_trace_diff *d) { return d ? &d->total : NULL; }

int gpujit_trace_diff_outcome(const gpujit_trace_diff *d, gpujit_trace_diff_verdict *out)
{
  if (!d || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_trace_diff_outcome: NULL argument");
  *out = d->verdict;
  return 0;
}
