/* A process's active steps explained (docs/profile.md, "Steps"): each step's wall time, the GPU
 * work it launched (by the launch's host time, else the operation's GPU start), how busy each
 * device and stream was, the idle gaps between a stream's operations, and how much of the step
 * the GPU sat idle waiting for the host to issue the next launch — with a verdict. The injection
 * library writes a "step" record at each recorded step's start (and an "after" record where
 * recording stops), so a step ends at the next boundary its process wrote. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "profile/model.h"

#define TOP_KERNELS 10

uint64_t gpujit__profile_step_end(const gpujit_profile *p, size_t i, bool *complete)
{
  const pf_step *s = &p->steps.v[i];
  uint64_t end = 0;
  /* the next boundary its process wrote: the next record, the steps being in process and time order */
  *complete = i + 1 < p->steps.n && p->steps.v[i + 1].pid == s->pid;
  if (*complete)
    return p->steps.v[i + 1].t;
  if (p->range) /* a range's process goes on: the step is open at the range's end */
    return p->range_t1 > s->t ? p->range_t1 : s->t;
  for (size_t k = 0; k < p->procs.n; k++) { /* open at the end: its process's exit, else its last record */
    const pf_proc *pr = &p->procs.v[k];
    uint64_t last = pr->exit_t ? pr->exit_t : pr->t1;
    if (pr->pid == s->pid && !pr->adapter && last >= s->t && (!end || last < end))
      end = last;
  }
  return end > s->t ? end : s->t;
}

/* Operations by process and the time that puts them in a step, launches by process and start:
 * a step's own found by two binary searches. */
typedef struct timed {
  int pid;
  uint64_t t;
  size_t i;
} timed;

static int by_time(const void *a, const void *b)
{
  const timed *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return x->t < y->t ? -1 : x->t > y->t;
}

/* The first of `v` at or after (pid, t). */
static size_t lower(const timed *v, size_t n, int pid, uint64_t t)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (v[mid].pid < pid || (v[mid].pid == pid && v[mid].t < t))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Launches by process and correlation id, for an operation's launch. */
static __thread const gpujit_profile *sort_p; /* qsort's comparators' profile */
static int by_corr(const void *a, const void *b)
{
  const pf_launch *x = &sort_p->launches.v[*(const size_t *)a], *y = &sort_p->launches.v[*(const size_t *)b];
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static const pf_launch *launch_of(const gpujit_profile *p, const size_t *by, const pf_op *o)
{
  size_t lo = 0, hi = p->launches.n;
  if (!o->corr)
    return NULL;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const pf_launch *l = &p->launches.v[by[mid]];
    if (l->pid < o->pid || (l->pid == o->pid && l->corr < o->corr))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < p->launches.n && p->launches.v[by[lo]].pid == o->pid && p->launches.v[by[lo]].corr == o->corr
             ? &p->launches.v[by[lo]]
             : NULL;
}

typedef struct ival {
  uint64_t s, e;
} ival;

static int by_start(const void *a, const void *b)
{
  const ival *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

/* An operation's interval from the step's start on: a GPU clock a little off the host's never
 * puts work before the step that launched it (busy stays within the step's window). */
static ival within(const pf_op *o, uint64_t t0)
{
  uint64_t s = o->s > t0 ? o->s : t0;
  return (ival){s, o->e > s ? o->e : s};
}

/* The length of the union of intervals (sorted here). */
static uint64_t union_ns(ival *v, size_t n)
{
  uint64_t total = 0, s = 0, e = 0;
  qsort(v, n, sizeof(*v), by_start);
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || v[i].s > e) {
      total += e - s;
      s = v[i].s, e = v[i].e;
    } else if (v[i].e > e) {
      e = v[i].e;
    }
  }
  return n ? total + (e - s) : 0;
}

static int by_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct gapstat {
  uint64_t n;
  double ms, median_us, p90_us, max_us;
} gapstat;

/* Gaps' total, median (the mean of the middle two for an even count), 90th percentile (nearest
 * rank) and largest. */
static gapstat gap_stats(uint64_t *g, size_t n)
{
  gapstat r = {.n = n};
  uint64_t sum = 0;
  if (!n)
    return r;
  qsort(g, n, sizeof(*g), by_u64);
  for (size_t i = 0; i < n; i++)
    sum += g[i];
  r.ms = (double)sum / 1e6;
  r.median_us = n % 2 ? (double)g[n / 2] / 1e3 : ((double)g[n / 2 - 1] + (double)g[n / 2]) / 2e3;
  r.p90_us = (double)g[(9 * n + 9) / 10 - 1] / 1e3;
  r.max_us = (double)g[n - 1] / 1e3;
  return r;
}

/* One step's work: its operations (indices into p->ops), their launches' return times, and
 * scratch for intervals and gaps. */
typedef struct work {
  timed *opt,
      *lt; /* every op by the time that puts it in a step (its launch's start, else its own), launches by start */
  size_t *ops, n;
  uint64_t *ret; /* per op of the step: its launch call's return, 0 when none was recorded */
  ival *iv, *wait;
  uint64_t *gaps;
  size_t nwait, ngaps;
  gpujit_profile_step_kernel *names; /* per kernel name of the step, before the costliest are kept */
} work;

static __thread const gpujit_profile *order_p;
static int by_stream(const void *a, const void *b)
{
  const pf_op *x = &order_p->ops.v[*(const size_t *)a], *y = &order_p->ops.v[*(const size_t *)b];
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  if (x->stream != y->stream)
    return x->stream < y->stream ? -1 : 1;
  return x->s < y->s ? -1 : x->s > y->s;
}

/* Every figure is one division of whole nanoseconds: the nearest double to its value, which the
 * JSON's shortest form reads back exactly. */
static double pct(uint64_t part, uint64_t whole)
{
  return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The streams of a step (its ops sorted by device, stream, start): a row each, their gaps into
 * w->gaps and the gaps the GPU waited on the host into w->wait. */
static void streams(gpujit_profile *p, work *w, int step, uint64_t t0)
{
  for (size_t a = 0, b; a < w->n; a = b) {
    const pf_op *first = &p->ops.v[w->ops[a]];
    gpujit_profile_step_stream *r = &p->step_streams[p->nstep_streams++];
    uint64_t end = 0, last_e = 0, waited = 0;
    size_t g0 = w->ngaps;
    for (b = a; b < w->n && p->ops.v[w->ops[b]].device == first->device && p->ops.v[w->ops[b]].stream == first->stream;
         b++) {
      const pf_op *o = &p->ops.v[w->ops[b]];
      w->iv[b - a] = within(o, t0);
      if (b > a) {
        uint64_t gap = o->s > end ? o->s - end : 0;
        w->gaps[w->ngaps++] = gap;
        if (gap && w->ret[b] > end) /* the next launch returned after the GPU ran dry: it waited for the host */
          waited += gap, w->wait[w->nwait++] = (ival){end, o->s};
      }
      end = b == a || w->iv[b - a].e > end ? w->iv[b - a].e : end;
      last_e = end;
    }
    gapstat g = gap_stats(w->gaps + g0, w->ngaps - g0);
    *r = (gpujit_profile_step_stream){.step = step,
                                      .device = first->device,
                                      .stream = first->stream,
                                      .ops = b - a,
                                      .busy_ms = (double)union_ns(w->iv, b - a) / 1e6,
                                      .span_ms = last_e > first->s ? (double)(last_e - first->s) / 1e6 : 0,
                                      .start_ms = first->s > t0 ? (double)(first->s - t0) / 1e6 : 0,
                                      .gaps = g.n,
                                      .gap_ms = g.ms,
                                      .gap_median_us = g.median_us,
                                      .gap_p90_us = g.p90_us,
                                      .gap_max_us = g.max_us,
                                      .host_wait_ms = (double)waited / 1e6};
  }
}

/* The devices of a step: the union of each one's operations. */
static void devices(gpujit_profile *p, work *w, int step, uint64_t t0, uint64_t window)
{
  for (size_t a = 0, b; a < w->n; a = b) {
    uint32_t dev = p->ops.v[w->ops[a]].device;
    gpujit_profile_step_device *r = &p->step_devices[p->nstep_devices++];
    for (b = a; b < w->n && p->ops.v[w->ops[b]].device == dev; b++)
      w->iv[b - a] = within(&p->ops.v[w->ops[b]], t0);
    r->step = step, r->device = dev, r->ops = b - a;
    uint64_t busy = union_ns(w->iv, b - a);
    r->busy_ms = (double)busy / 1e6;
    r->busy_pct = pct(busy, window);
  }
}

static int by_name(const void *a, const void *b)
{
  return strcmp(order_p->ops.v[*(const size_t *)a].name, order_p->ops.v[*(const size_t *)b].name);
}

static int by_total(const void *a, const void *b)
{
  const gpujit_profile_step_kernel *x = a, *y = b;
  if (x->total_ms != y->total_ms)
    return x->total_ms > y->total_ms ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* The step's kernels by name, the costliest TOP_KERNELS kept (a step may run many more names than
 * are kept: they are summed aside, in `w->names`, and only the kept ones copied). */
static void kernels(gpujit_profile *p, work *w, int step)
{
  size_t nk = 0, rows = 0;
  gpujit_profile_step_kernel *k = w->names;
  for (size_t i = 0; i < w->n; i++)
    if (p->ops.v[w->ops[i]].kind == 'k')
      w->ops[nk++] = w->ops[i];
  order_p = p;
  qsort(w->ops, nk, sizeof(*w->ops), by_name);
  for (size_t a = 0, b; a < nk; a = b) {
    uint64_t ns = 0;
    for (b = a; b < nk && !strcmp(p->ops.v[w->ops[b]].name, p->ops.v[w->ops[a]].name); b++)
      ns += p->ops.v[w->ops[b]].e > p->ops.v[w->ops[b]].s ? p->ops.v[w->ops[b]].e - p->ops.v[w->ops[b]].s : 0;
    k[rows++] = (gpujit_profile_step_kernel){.step = step,
                                             .name = p->ops.v[w->ops[a]].name,
                                             .count = b - a,
                                             .total_ms = (double)ns / 1e6,
                                             .mean_us = (double)ns / (1e3 * (double)(b - a))};
  }
  qsort(k, rows, sizeof(*k), by_total);
  rows = rows < TOP_KERNELS ? rows : TOP_KERNELS;
  memcpy(p->step_kernels + p->nstep_kernels, k, rows * sizeof(*k));
  p->nstep_kernels += rows;
}

/* The verdict and its sentence. */
static int verdict(gpujit_profile *p, gpujit_profile_step_row *r)
{
  char line[400];
  double idle_pct = 100.0 - r->busy_pct;
  if (!r->kernels && !r->copies && !r->memsets) {
    r->verdict = "no-gpu-work";
    snprintf(line, sizeof(line), "no GPU work: step %llu launched nothing the profile recorded (%.3f ms on the host)",
             (unsigned long long)r->step, r->wall_ms);
  } else if (r->busy_pct >= 90) {
    r->verdict = "gpu-bound";
    snprintf(line, sizeof(line), "GPU-bound: busy %.0f %% of step %llu: the kernels themselves are the time",
             r->busy_pct, (unsigned long long)r->step);
  } else if (r->host_wait_pct >= 20 && r->host_wait_ms >= r->idle_ms / 2) {
    r->verdict = "launch-bound";
    snprintf(line, sizeof(line),
             "launch-bound: the GPU idled %.0f %% of step %llu waiting for launches, median gap %.1f µs between "
             "operations: CUDA graphs or fusion would pay",
             r->host_wait_pct, (unsigned long long)r->step, r->gap_median_us);
  } else if (!r->launches && idle_pct >= 50) { /* no launch records: who made the GPU wait is not known */
    r->verdict = "idle";
    snprintf(line, sizeof(line),
             "idle: the GPU idled %.0f %% of step %llu; without launch records (--schedule records them) "
             "launch-bound and host-bound cannot be told apart",
             idle_pct, (unsigned long long)r->step);
  } else if (idle_pct >= 50) {
    r->verdict = "host-bound";
    snprintf(line, sizeof(line),
             "host-bound: the GPU idled %.0f %% of step %llu (%.0f %% waiting for launches): the host's own work "
             "(data, synchronization, Python) is the time",
             idle_pct, (unsigned long long)r->step, r->host_wait_pct);
  } else {
    r->verdict = "mixed";
    snprintf(line, sizeof(line),
             "mixed: busy %.0f %% of step %llu, idle %.0f %% (%.0f %% waiting for launches, median gap %.1f µs)",
             r->busy_pct, (unsigned long long)r->step, idle_pct, r->host_wait_pct, r->gap_median_us);
  }
  if (!(p->step_strings[r->id] = gpujit__strdup(line)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  r->summary = p->step_strings[r->id];
  return 0;
}

/* Which operations step i launched: by their launch call's time, else (no launch recorded) by their start. */
static void step_ops(gpujit_profile *p, const size_t *by, const pf_step *s, uint64_t end, int id, work *w)
{
  size_t lo = lower(w->opt, p->ops.n, s->pid, s->t), hi = lower(w->opt, p->ops.n, s->pid, end);
  w->n = 0;
  for (size_t k = lo; k < hi; k++)
    w->ops[w->n++] = w->opt[k].i, p->ops.v[w->opt[k].i].step = id + 1;
  order_p = p;
  qsort(w->ops, w->n, sizeof(*w->ops), by_stream);
  for (size_t k = 0; k < w->n; k++) {
    const pf_launch *l = launch_of(p, by, &p->ops.v[w->ops[k]]);
    w->ret[k] = l ? l->t1 : 0;
  }
}

static const char *schedule_of(const gpujit_profile *p, int pid)
{
  for (size_t k = 0; k < p->procs.n; k++)
    if (p->procs.v[k].pid == pid && p->procs.v[k].schedule)
      return p->procs.v[k].schedule;
  return "";
}

/* One active step: its row and its devices', streams' and kernels' rows. */
static int one_step(gpujit_profile *p, const size_t *by, size_t i, work *w, uint64_t run0)
{
  const pf_step *s = &p->steps.v[i];
  gpujit_profile_step_row *r = &p->step_rows[p->nstep_rows];
  bool complete;
  uint64_t end = gpujit__profile_step_end(p, i, &complete), last = end, gpu = 0, busy, both;
  *r = (gpujit_profile_step_row){.id = (int)p->nstep_rows++,
                                 .pid = s->pid,
                                 .step = s->n,
                                 .cycle = s->cycle,
                                 .src = s->src,
                                 .schedule = schedule_of(p, s->pid),
                                 .complete = complete,
                                 .start_ms = s->t > run0 ? (double)(s->t - run0) / 1e6 : 0,
                                 .wall_ms = (double)(end - s->t) / 1e6};
  r->launches = lower(w->lt, p->launches.n, s->pid, end) - lower(w->lt, p->launches.n, s->pid, s->t);
  step_ops(p, by, s, end, r->id, w);
  for (size_t k = 0; k < w->n; k++) {
    const pf_op *o = &p->ops.v[w->ops[k]];
    r->kernels += o->kind == 'k', r->copies += o->kind == 'c', r->memsets += o->kind == 'm';
    gpu += o->e > o->s ? o->e - o->s : 0;
    last = o->e > last ? o->e : last;
  }
  r->window_ms = (double)(last - s->t) / 1e6;
  r->gpu_ms = (double)gpu / 1e6;
  w->ngaps = w->nwait = 0;
  streams(p, w, r->id, s->t);
  gapstat g = gap_stats(w->gaps, w->ngaps);
  r->gaps = g.n, r->gap_ms = g.ms, r->gap_median_us = g.median_us, r->gap_p90_us = g.p90_us, r->gap_max_us = g.max_us;
  for (size_t k = 0; k < w->n; k++) /* the union of all: busy; with the host waits added: busy or waiting */
    w->iv[k] = within(&p->ops.v[w->ops[k]], s->t);
  busy = union_ns(w->iv, w->n);
  memcpy(w->iv + w->n, w->wait, w->nwait * sizeof(*w->wait));
  both = union_ns(w->iv, w->n + w->nwait);
  r->busy_ms = (double)busy / 1e6;
  r->busy_pct = pct(busy, last - s->t);
  r->idle_ms = last - s->t > busy ? (double)(last - s->t - busy) / 1e6 : 0; /* GPU clock skew: never below 0 */
  r->host_wait_ms = (double)(both - busy) / 1e6; /* waiting while no stream of the process was busy */
  r->host_wait_pct = pct(both - busy, last - s->t);
  devices(p, w, r->id, s->t, last - s->t);
  kernels(p, w, r->id);
  return verdict(p, r);
}

static int by_boundary(const void *a, const void *b)
{
  const pf_step *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return x->n < y->n ? -1 : x->n > y->n;
}

/* A process that noted a schedule and recorded no active step: said, not silently dropped. */
static void unscheduled(gpujit_profile *p)
{
  for (size_t i = 0; i < p->procs.n; i++) {
    const pf_proc *pr = &p->procs.v[i];
    bool any = false;
    for (size_t k = 0; pr->schedule && k < p->nstep_rows && !any; k++)
      any = p->step_rows[k].pid == pr->pid;
    if (pr->schedule && !any)
      gpujit__profile_note(p,
                           "process %d: steps scheduled (%s), none active recorded: it ended before the "
                           "schedule's first active step, or marked no steps",
                           pr->pid, pr->schedule);
  }
}

/* The launches by correlation id; the operations and launches by time. */
static void index_work(const gpujit_profile *p, size_t *by, work *w)
{
  for (size_t i = 0; i < p->launches.n; i++) {
    by[i] = i;
    w->lt[i] = (timed){p->launches.v[i].pid, p->launches.v[i].t0, i};
  }
  sort_p = p;
  qsort(by, p->launches.n, sizeof(*by), by_corr);
  qsort(w->lt, p->launches.n, sizeof(*w->lt), by_time);
  for (size_t i = 0; i < p->ops.n; i++) {
    const pf_op *o = &p->ops.v[i];
    const pf_launch *l = launch_of(p, by, o);
    w->opt[i] = (timed){o->pid, l ? l->t0 : o->s, i};
  }
  qsort(w->opt, p->ops.n, sizeof(*w->opt), by_time);
}

int gpujit__profile_steps(gpujit_profile *p)
{
  size_t nactive = 0, *by = NULL, n = p->ops.n + 1;
  uint64_t run0 = UINT64_MAX;
  work w = {0};
  int err = 0;
  /* in process and time order: a step ends at the next, its rows come in that order */
  if (p->steps.n) /* (no array at all when no step was recorded) */
    qsort(p->steps.v, p->steps.n, sizeof(*p->steps.v), by_boundary);
  for (size_t i = 0; i < p->steps.n; i++)
    nactive += !strcmp(p->steps.v[i].phase, "active");
  if (!nactive) {
    unscheduled(p);
    return 0;
  }
  for (size_t i = 0; i < p->procs.n; i++)
    run0 = p->procs.v[i].t0 && p->procs.v[i].t0 < run0 ? p->procs.v[i].t0 : run0;
  if (p->range)
    run0 = p->range_t0;
  p->step_rows = calloc(nactive, sizeof(*p->step_rows));
  p->step_strings = calloc(nactive, sizeof(*p->step_strings));
  /* an operation is in one step at most (a process's steps do not overlap): a row per op at most */
  p->step_devices = calloc(n, sizeof(*p->step_devices));
  p->step_streams = calloc(n, sizeof(*p->step_streams));
  p->step_kernels = calloc(nactive * TOP_KERNELS + 1, sizeof(*p->step_kernels));
  by = calloc(p->launches.n + 1, sizeof(*by));
  w.ops = calloc(n, sizeof(*w.ops)), w.ret = calloc(n, sizeof(*w.ret)), w.gaps = calloc(n, sizeof(*w.gaps));
  w.iv = calloc(2 * n, sizeof(*w.iv)), w.wait = calloc(n, sizeof(*w.wait));
  w.opt = calloc(n, sizeof(*w.opt)), w.lt = calloc(p->launches.n + 1, sizeof(*w.lt));
  w.names = calloc(n, sizeof(*w.names));
  if (!p->step_rows || !p->step_strings || !p->step_devices || !p->step_streams || !p->step_kernels || !by || !w.ops ||
      !w.ret || !w.gaps || !w.iv || !w.wait || !w.opt || !w.lt || !w.names)
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
  else
    index_work(p, by, &w);
  for (size_t i = 0; err == 0 && i < p->steps.n; i++)
    if (!strcmp(p->steps.v[i].phase, "active"))
      err = one_step(p, by, i, &w, run0);
  free(by), free(w.ops), free(w.ret), free(w.gaps), free(w.iv), free(w.wait), free(w.opt), free(w.lt), free(w.names);
  if (err == 0)
    unscheduled(p);
  return err;
}

void gpujit__profile_steps_free(gpujit_profile *p)
{
  for (size_t i = 0; p->step_strings && i < p->nstep_rows; i++)
    free(p->step_strings[i]);
  free(p->step_strings), free(p->step_rows), free(p->step_devices), free(p->step_streams), free(p->step_kernels);
  free(p->steps.v), free(p->launches.v);
}

size_t gpujit_profile_steps(const gpujit_profile *p, const gpujit_profile_step_row **rows)
{
  if (rows)
    *rows = p && p->nstep_rows ? p->step_rows : NULL;
  return p ? p->nstep_rows : 0;
}
