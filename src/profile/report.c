/*
 * A profile's module rows: every image loaded is a module (all loads of the same bytes one row),
 * tied by content to the compile that produced it — an NVRTC program's PTX or CUBIN, nvJitLink's
 * cubin, libNVVM's PTX — else named by what it is (PTX the driver compiled, a prebuilt image).
 * Launches reach their module through the handle the launch's function belongs to; the driver's
 * JIT reaches its load through the load's correlation id. Compiles nothing loaded are rows too.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "profile/model.h"

static double ms(uint64_t a, uint64_t b) { return b > a ? (double)(b - a) / 1e6 : 0; }

static int by_t0(const void *a, const void *b, void *ctx)
{
  const pf_compile *c = ctx;
  uint64_t x = c[*(const size_t *)a].t0, y = c[*(const size_t *)b].t0;
  return (x > y) - (x < y);
}

/* A row, found by its key or made (name copied). @return its index, or -1. */
static int row(gpujit_profile *p, char ***keys, const char *key, const char *name, const char *origin,
               const char *image, int pid)
{
  gpujit_profile_module *m;
  for (size_t i = 0; i < p->nrows; i++)
    if (!strcmp((*keys)[i], key))
      return (int)i;
  if (!(m = realloc(p->rows, (p->nrows + 1) * sizeof(*m))))
    return -1;
  p->rows = m;
  if (!(*keys = realloc(*keys, (p->nrows + 1) * sizeof(**keys))) ||
      !(p->row_names = realloc(p->row_names, (p->nrows + 1) * sizeof(*p->row_names))) ||
      !(p->row_kernels = realloc(p->row_kernels, (p->nrows + 1) * sizeof(*p->row_kernels))))
    return -1;
  m = &p->rows[p->nrows];
  memset(m, 0, sizeof(*m));
  (*keys)[p->nrows] = gpujit__strdup(key);
  p->row_names[p->nrows] = gpujit__strdup(name);
  m->name = p->row_names[p->nrows];
  p->row_kernels[p->nrows] = NULL;
  m->kernel = "";
  m->origin = origin;
  m->image = image;
  m->pid = pid;
  return (int)p->nrows++;
}

static void mark_repeats(gpujit_profile *p)
{
  size_t *order = malloc(p->compiles.n * sizeof(*order) + 1);
  if (!order)
    return;
  for (size_t i = 0; i < p->compiles.n; i++)
    order[i] = i;
  qsort_r(order, p->compiles.n, sizeof(*order), by_t0, p->compiles.v);
  for (size_t i = 0; i < p->compiles.n; i++) {
    pf_compile *c = &p->compiles.v[order[i]];
    for (size_t k = 0; k < i && !c->repeat; k++) {
      const pf_compile *d = &p->compiles.v[order[k]];
      c->repeat = !strcmp(c->kind, d->kind) && c->src[0] && !strcmp(c->src, d->src) && !strcmp(c->options, d->options);
    }
  }
  free(order);
}

/* The row of module `handle` in process `pid`: the last successful load that made it. */
static int row_of_handle(const gpujit_profile *p, int pid, uint64_t handle)
{
  int r = -1;
  for (size_t i = 0; i < p->loads.n && handle; i++)
    if (p->loads.v[i].pid == pid && p->loads.v[i].handle == handle && p->loads.v[i].result == 0)
      r = p->loads.v[i].module;
  return r;
}

static void devices(gpujit_profile *p)
{
  for (size_t i = 0; i < p->ksums.n + p->osums.n; i++) {
    uint32_t dev = i < p->ksums.n ? p->ksums.v[i].device : p->osums.v[i - p->ksums.n].device;
    gpujit_profile_device *d = NULL;
    for (size_t k = 0; k < p->ndevices && !d; k++)
      if (p->devices[k].device == dev)
        d = &p->devices[k];
    if (!d) {
      gpujit_profile_device *g = realloc(p->devices, (p->ndevices + 1) * sizeof(*g));
      if (!g)
        return;
      p->devices = g;
      d = &p->devices[p->ndevices++];
      memset(d, 0, sizeof(*d));
      d->device = dev;
    }
    if (i < p->ksums.n) {
      d->launches += p->ksums.v[i].n;
      d->kernel_ms += (double)p->ksums.v[i].ns / 1e6;
    } else {
      const pf_osum *o = &p->osums.v[i - p->ksums.n];
      if (!strcmp(o->op, "copy"))
        d->copies += o->n, d->copy_bytes += o->bytes, d->copy_ms += (double)o->ns / 1e6;
      else
        d->memsets += o->n, d->memset_ms += (double)o->ns / 1e6;
    }
  }
}

static int by_cost(const void *a, const void *b, void *ctx)
{
  const gpujit_profile_module *x = &((const gpujit_profile_module *)ctx)[*(const size_t *)a];
  const gpujit_profile_module *y = &((const gpujit_profile_module *)ctx)[*(const size_t *)b];
  double cx = x->compile_ms + x->load_ms + x->gpu_ms, cy = y->compile_ms + y->load_ms + y->gpu_ms;
  return (cx < cy) - (cx > cy);
}

/* Pass 1: a row per image loaded, named for the compile that made it (by hash), else its kind. */
static int rows_of_loads(gpujit_profile *p, char ***keys)
{
  gpujit_profile_totals *t = &p->totals;
  /* modules: one row per image loaded */
  for (size_t i = 0; i < p->loads.n; i++) {
    pf_load *l = &p->loads.v[i];
    const pf_compile *c;
    char key[600], name[600];
    const char *origin;
    if (l->result != 0)
      continue;
    c = gpujit__profile_maker(p, l);
    if (c && c->unit) /* every module of a framework's compile in its row */
      snprintf(key, sizeof(key), "unit %zu", (size_t)(c - p->compiles.v));
    else if (l->hash[0])
      snprintf(key, sizeof(key), "image %s", l->hash);
    else
      snprintf(key, sizeof(key), "file %s %d %llx", l->file, l->pid, (unsigned long long)l->handle);
    origin = c ? c->kind
             : !strcmp(l->image, "ptx") ? "driver JIT of PTX"
             : !strcmp(l->image, "file") ? "file"
             : l->hash[0] ? "prebuilt" : "unknown";
    if (c)
      snprintf(name, sizeof(name), "%s", c->name);
    else if (l->file[0])
      snprintf(name, sizeof(name), "%s", l->file);
    else
      snprintf(name, sizeof(name), "%s %.8s", l->image[0] ? l->image : "image", l->hash);
    if ((l->module = row(p, keys, key, name, origin, !strcmp(l->image, "file") ? "file" : l->image, l->pid)) < 0) {
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    }
    if (c && c->unit && p->rows[l->module].loads && p->rows[l->module].image_bytes != l->bytes)
      p->rows[l->module].image = "modules"; /* several images */
    p->rows[l->module].loads++;
    p->rows[l->module].image_bytes = l->bytes;
    p->rows[l->module].load_ms += ms(l->t0, l->t1);
    t->loads++;
    t->load_ms += ms(l->t0, l->t1);
  }
  return 0;
}

/* A window of benchmarking: kernels that ran inside it, in its process, are autotuning — compile
 * work of `owner`'s row (-1: the row whose framework-compiled kernels it ran most). */
typedef struct bench_window {
  int pid, owner;
  uint64_t t0, t1;
} bench_window;

/* The row an autotuner's span benchmarked: of the kernels it ran, the framework-compiled row's
 * with the most launches there (candidates, not the cache flushes between them), else any row. */
static int benchmarked_row(const gpujit_profile *p, const bench_window *w, char **keys)
{
  int best = -1, any = -1;
  uint64_t most = 0;
  uint64_t *count = calloc(p->nrows + 1, sizeof(*count));
  if (!count)
    return -1;
  for (size_t i = 0; i < p->ops.n; i++) {
    const pf_op *o = &p->ops.v[i];
    int r;
    if (o->kind != 'k' || o->pid != w->pid || o->s < w->t0 || o->e > w->t1 || (r = row_of_handle(p, o->pid, o->handle)) < 0)
      continue;
    count[r]++;
    if (any < 0)
      any = r;
    if (!strncmp(keys[r], "unit ", 5) && count[r] > most)
      most = count[r], best = r;
  }
  free(count);
  return best >= 0 ? best : any;
}

/* An autotuner's row: that of the kernel its key names (the one it tunes: where the program
 * launches it most), else the framework's compile whose kernels it ran (else any it ran), or -1. */
static int benchmarked(const gpujit_profile *p, const pf_compile *c, char **keys)
{
  int any = -1;
  uint64_t most = 0;
  for (size_t i = 0; c->key && c->key[0] && i < p->ksums.n; i++) { /* its key names the kernel it tunes */
    int r;
    if (p->ksums.v[i].pid == c->pid && !strcmp(p->ksums.v[i].name, c->key) && p->ksums.v[i].n > most &&
        (r = row_of_handle(p, c->pid, p->ksums.v[i].handle)) >= 0)
      most = p->ksums.v[i].n, any = r;
  }
  if (any >= 0)
    return any;
  {
    const bench_window w = {c->pid, -1, c->t0, c->t1};
    return benchmarked_row(p, &w, keys);
  }
}

/* Pass 2: compiles into the row of the image they made, else a row of their own. */
static int rows_of_compiles(gpujit_profile *p, char ***keys)
{
  gpujit_profile_totals *t = &p->totals;
  /* compiles: into the row of the image they made, else a row of their own */
  for (size_t i = 0; i < p->compiles.n; i++) { /* an image an inner compile wrote is its outer one's */
    pf_compile *c = &p->compiles.v[i], *top = (pf_compile *)gpujit__profile_top(p, c);
    for (size_t r = 0; c != top && top->module < 0 && r < p->nrows; r++)
      if (!strncmp((*keys)[r], "image ", 6) && gpujit__profile_made(c, (*keys)[r] + 6, false))
        top->module = (int)r;
  }
  for (size_t i = 0; i < p->loads.n; i++) { /* the compile that made a load's image: its row */
    pf_compile *c = p->loads.v[i].module >= 0 ? (pf_compile *)gpujit__profile_maker(p, &p->loads.v[i]) : NULL;
    if (c && c->module < 0 && !c->unit)
      c->module = p->loads.v[i].module;
  }
  for (size_t i = 0; i < p->compiles.n; i++) {
    pf_compile *c = &p->compiles.v[i];
    double d = pf_compile_ms(c);
    gpujit_profile_module *m;
    char unit_key[40];
    if (c->parent >= 0 || c->stage_of >= 0) /* its time is its container's; a stage's, below */
      continue;
    snprintf(unit_key, sizeof(unit_key), "unit %zu", i);
    for (size_t r = 0; r < p->nrows && c->module < 0; r++)
      if (c->unit ? !strcmp((*keys)[r], unit_key) : !strncmp((*keys)[r], "image ", 6) && gpujit__profile_made(c, (*keys)[r] + 6, false))
        c->module = (int)r;
    if (c->module < 0 && c->autotune)
      c->module = benchmarked(p, c, *keys);
    if (c->module < 0) {
      char key[700];
      snprintf(key, sizeof(key), "compile %s %s %d", c->kind, c->name, c->result != 0);
      if ((c->module = row(p, keys, key, c->name,
                           c->result ? "failed" : c->unit || c->tool ? c->kind : "not loaded", "", c->pid)) < 0) {
        return gpujit__error(GPUJIT_ENOMEM, "out of memory");
      }
    }
    m = &p->rows[c->module];
    m->cache_hits += !strcmp(c->cache, "hit");
    m->compiles++;
    m->compile_ms += d;
    if (c->repeat)
      m->repeats++, m->repeat_ms += d, t->repeats++, t->repeat_ms += d;
    t->compiles++;
    t->failed += c->result != 0;
    if (!strcmp(c->kind, "nvjitlink"))
      t->link_ms += d;
    else
      t->compile_ms += d;
  }
  for (size_t i = 0; i < p->compiles.n; i++) { /* inner compiles and later stages: their compile's row */
    pf_compile *c = &p->compiles.v[i];
    if (c->parent < 0 && c->stage_of < 0)
      continue;
    c->module = gpujit__profile_top(p, c)->module;
    if (c->parent < 0 && c->module >= 0) { /* a stage: its time, after its compile's, is the build's */
      double d = pf_compile_ms(c);
      p->rows[c->module].compile_ms += d;
      t->compile_ms += d;
    }
  }
  return 0;
}

/* The row of kernels whose module was not seen loading, or -1. */
static int row_of_unattributed(const gpujit_profile *p, char **keys)
{
  for (size_t r = 0; r < p->nrows; r++)
    if (!strcmp(keys[r], "unattributed"))
      return (int)r;
  return -1;
}

/* Pass 4b: kernels run while a compile or an autotuner benchmarked (the adapters declare which:
 * a unit that "benchmarks", a "span" of role autotune) are compile work, not the program's: taken
 * out of their rows' launches and GPU time and counted as autotuning of the row they tuned. */
static int autotuning(gpujit_profile *p, char **keys)
{
  size_t nw = 0;
  bench_window *w = malloc((p->compiles.n + p->spans.n) * sizeof(*w) + 1);
  if (!w)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t k = 0; k < p->compiles.n; k++) {
    const pf_compile *c = &p->compiles.v[k];
    if (c->unit && c->benchmarks) /* inside another compile: that one's autotuning */
      w[nw++] = (bench_window){c->pid, c->parent >= 0 ? gpujit__profile_top(p, c)->module : c->module, c->t0, c->t1};
  }
  for (size_t k = 0; k < p->spans.n; k++)
    w[nw++] = (bench_window){p->spans.v[k].pid, -1, p->spans.v[k].t0, p->spans.v[k].t1};
  for (size_t b = 0; b < nw; b++)
    if (w[b].owner < 0)
      w[b].owner = benchmarked_row(p, &w[b], keys);
  for (size_t i = 0; nw && i < p->ops.n; i++) {
    const pf_op *o = &p->ops.v[i];
    const bench_window *in = NULL;
    int r;
    double d = ms(o->s, o->e);
    for (size_t b = 0; b < nw && !in; b++)
      if (w[b].pid == o->pid && o->s >= w[b].t0 && o->e <= w[b].t1)
        in = &w[b];
    if (!in || o->kind != 'k')
      continue;
    if ((r = row_of_handle(p, o->pid, o->handle)) < 0)
      r = row_of_unattributed(p, keys);
    if (r >= 0 && p->rows[r].launches) { /* out of the program's launches (where its counts held it) */
      p->rows[r].launches--;
      p->rows[r].gpu_ms = p->rows[r].gpu_ms > d ? p->rows[r].gpu_ms - d : 0;
      p->totals.launches--;
    }
    r = in->owner >= 0 ? in->owner : r;
    if (r >= 0) {
      p->rows[r].autotune_launches++;
      p->rows[r].autotune_ms += d;
    }
    p->totals.autotune_launches++;
    p->totals.autotune_ms += d;
  }
  free(w);
  return 0;
}

/* Pass 3: the driver's JIT into the row of the load it served (by correlation id). */
static int jit_of_loads(gpujit_profile *p)
{
  gpujit_profile_totals *t = &p->totals;
  /* the driver's JIT, by the load's correlation id */
  for (size_t i = 0; i < p->jits.n; i++) {
    const pf_jit *j = &p->jits.v[i];
    t->jit_ms += ms(j->s, j->e);
    for (size_t k = 0; k < p->loads.n; k++)
      if (p->loads.v[k].pid == j->pid && p->loads.v[k].corr == j->corr && p->loads.v[k].module >= 0) {
        p->rows[p->loads.v[k].module].jit_ms += ms(j->s, j->e);
        p->rows[p->loads.v[k].module].jit_cache_hits += j->cache_hit;
        break;
      }
  }
  return 0;
}

/* Pass 4: launches and their GPU time into the row of the module their function belongs to. */
static int rows_of_launches(gpujit_profile *p, char ***keys)
{
  gpujit_profile_totals *t = &p->totals;
  /* launches, by the module their function belongs to */
  for (size_t i = 0; i < p->ksums.n; i++) {
    const pf_ksum *s = &p->ksums.v[i];
    int r = row_of_handle(p, s->pid, s->handle);
    gpujit_profile_module *m;
    bool seen = false;
    if (r < 0 && (r = row(p, keys, "unattributed", "kernels of modules not seen loading", "unknown", "", s->pid)) < 0) {
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    }
    m = &p->rows[r];
    for (size_t k = 0; k < i && !seen; k++) /* distinct kernels of the row */
      seen = !strcmp(p->ksums.v[k].name, s->name) && row_of_handle(p, p->ksums.v[k].pid, p->ksums.v[k].handle) == r;
    m->kernels += !seen;
    m->launches += s->n;
    { /* the kernel launched most names the row */
      uint64_t most = 0;
      for (size_t k = 0; k < p->ksums.n; k++)
        if (!strcmp(p->ksums.v[k].name, m->kernel))
          most += p->ksums.v[k].n;
      if (!m->kernel[0] || (strcmp(m->kernel, s->name) && s->n > most)) {
        free(p->row_kernels[r]);
        p->row_kernels[r] = gpujit__strdup(s->name);
        m->kernel = p->row_kernels[r] ? p->row_kernels[r] : "";
      }
    }
    m->gpu_ms += (double)s->ns / 1e6;
    t->launches += s->n;
  }
  return 0;
}

/* Pass 5: devices' totals, and each row's break-even in launches. */
static int gpu_and_break_even(gpujit_profile *p)
{
  gpujit_profile_totals *t = &p->totals;
  devices(p);
  for (size_t d = 0; d < p->ndevices; d++)
    t->gpu_ms += p->devices[d].kernel_ms + p->devices[d].copy_ms + p->devices[d].memset_ms;
  for (size_t r = 0; r < p->nrows; r++) {
    gpujit_profile_module *m = &p->rows[r];
    if (m->launches && m->gpu_ms > 0)
      m->break_even = (m->compile_ms + m->load_ms + m->autotune_ms) / (m->gpu_ms / (double)m->launches);
    t->untied += m->loads && !m->compiles; /* loaded, made by nothing seen */
  }
  return 0;
}

/* Pass 6: rows by cost, largest first; loads and compiles follow their rows. */
static int sort_rows(gpujit_profile *p)
{
  { /* largest cost first; loads and compiles follow their rows */
    size_t *order = malloc(p->nrows * sizeof(*order) + 1), *where = malloc(p->nrows * sizeof(*where) + 1);
    gpujit_profile_module *sorted = malloc(p->nrows * sizeof(*sorted) + 1);
    if (!order || !where || !sorted) {
      free(order), free(where), free(sorted);
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    }
    for (size_t r = 0; r < p->nrows; r++)
      order[r] = r;
    qsort_r(order, p->nrows, sizeof(*order), by_cost, p->rows);
    for (size_t r = 0; r < p->nrows; r++)
      sorted[r] = p->rows[order[r]], where[order[r]] = r;
    for (size_t i = 0; i < p->loads.n; i++)
      if (p->loads.v[i].module >= 0)
        p->loads.v[i].module = (int)where[p->loads.v[i].module];
    for (size_t i = 0; i < p->compiles.n; i++)
      if (p->compiles.v[i].module >= 0)
        p->compiles.v[i].module = (int)where[p->compiles.v[i].module];
    free(p->rows);
    p->rows = sorted;
    free(order), free(where);
  }
  return 0;
}

/* A Python started with the hook on whose hook never wrote (no adapter file of its pid) and whose
 * options did not already say why: its framework compiles are missing, which the report says. */
static void pythons_without_hook(gpujit_profile *p)
{
  for (size_t i = 0; i < p->procs.n; i++) {
    const pf_proc *pr = &p->procs.v[i];
    bool hooked = false;
    if (!pr->hook || pr->hook_said || pr->adapter)
      continue;
    for (size_t k = 0; k < p->procs.n && !hooked; k++)
      hooked = p->procs.v[k].adapter && p->procs.v[k].pid == pr->pid;
    if (!hooked)
      gpujit__profile_note(p, "process %d (%s) is a Python that ran without gpujit's start-up hook (a sitecustomize "
                              "of its own came before gpujit's on PYTHONPATH — in a venv usercustomize never runs — "
                              "or its PYTHONPATH was taken away): the compiles of the Python frameworks it ran are not in "
                              "this report",
                           pr->pid, pr->exe && strrchr(pr->exe, '/') ? strrchr(pr->exe, '/') + 1 : "python");
  }
}

/* Pass 7: processes, partial ones, what was lost. */
static int process_totals(gpujit_profile *p)
{
  gpujit_profile_totals *t = &p->totals;
  pythons_without_hook(p);
  for (size_t i = 0; i < p->procs.n; i++) {
    const pf_proc *pr = &p->procs.v[i];
    t->lost += pr->lost; /* an adapter's too: records it could not write */
    if (pr->adapter) /* a framework adapter's file of a process counted by its own */
      continue;
    t->processes++;
    t->processes_partial += !pr->ended;
    t->untraced += pr->untraced;
    t->gpu_recorded |= pr->gpu;
  }
  t->partial = t->processes_partial > 0 || p->records_missing;
  return 0;
}

int gpujit__profile_attribute(gpujit_profile *p)
{
  char **keys = NULL; /* each row's key, while rows are made */
  int err;
  mark_repeats(p);
  gpujit__profile_nest(p);
  if ((err = rows_of_loads(p, &keys)) == 0 && (err = rows_of_compiles(p, &keys)) == 0 && (err = jit_of_loads(p)) == 0 &&
      (err = rows_of_launches(p, &keys)) == 0 && (err = autotuning(p, keys)) == 0 && (err = gpu_and_break_even(p)) == 0 &&
      (err = sort_rows(p)) == 0 && (err = gpujit__profile_compilers(p)) == 0)
    err = process_totals(p);
  for (size_t r = 0; r < p->nrows; r++)
    free(keys ? keys[r] : NULL);
  free(keys);
  return err;
}
