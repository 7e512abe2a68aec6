/* Kernel regions read by every timer kind itself: each timed region, benchmark (its samples), capture
 * and host timer opens a window of its own, nested in those open. A module with regions is reset
 * before its first launch while any window is open; a window that opens while a module is already
 * recording marks where its buffer stands, and reads only what came after. Each window's own timing
 * of the module's kernels gives their time (share). A module without regions costs one branch per
 * launch. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/buf.h"
#include "timing/regions.h"

static void free_win(gpujit__rwin *w)
{
  if (!w)
    return;
  for (size_t i = 0; i < w->nmods; i++) {
    gpujit_region_report_free(w->mods[i].report);
    free(w->mods[i].mark);
  }
  free(w->mods);
  free(w);
}

static gpujit__rwatch_mod *mod_of(gpujit__rwin *w, const struct gpujit_loaded *l)
{
  for (size_t i = 0; w && i < w->nmods; i++)
    if (w->mods[i].l == l)
      return &w->mods[i];
  return NULL;
}

static gpujit__rwatch_mod *add_mod(gpujit__rwin *w, struct gpujit_loaded *l)
{
  gpujit__rwatch_mod *m = gpujit__grow(w->mods, &w->capmods, w->nmods, sizeof(*m), 4);
  if (!m)
    return NULL;
  w->mods = m;
  m = &w->mods[w->nmods++];
  memset(m, 0, sizeof(*m));
  m->l = l;
  return m;
}

int gpujit__rwatch_open(gpujit__timing *t, gpujit__rwin **out)
{
  gpujit__rwin **ws, *w = calloc(1, sizeof(*w));
  int err;
  *out = NULL;
  if (!w || !(ws = gpujit__grow(t->wins, &t->capwins, t->nwins, sizeof(*ws), 4))) {
    free(w);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  t->wins = ws;
  /* the modules recording for the windows open: where their buffers stand, after the work before */
  for (size_t i = 0; i < t->nactive; i++) {
    gpujit__rwatch_mod *m = add_mod(w, t->active[i]);
    if (!m) {
      free_win(w);
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    }
    if ((err = gpujit__regions_mark(t->active[i], &m->mark)) < 0) {
      free_win(w);
      return err;
    }
  }
  t->wins[t->nwins++] = w;
  gpujit__device_hooks_enable(t->dev, true);
  *out = w;
  return 0;
}

void gpujit__rwatch_launch(gpujit__timing *t, struct gpujit_loaded *l)
{
  struct gpujit_loaded **a;
  size_t i = 0;
  if (!t->nwins || !l || !l->regions_events)
    return;
  while (i < t->nactive && t->active[i] != l)
    i++;
  if (i == t->nactive) {
    if (!(a = gpujit__grow(t->active, &t->capactive, t->nactive, sizeof(*a), 4)))
      return; /* out of memory: the module goes unread, the launch unharmed */
    t->active = a;
    t->active[t->nactive++] = l;
    /* in order on the stream, before the launch: the windows' events only */
    gpujit_loaded_regions_reset(l);
  }
  for (size_t k = 0; k < t->nwins; k++) {
    gpujit__rwatch_mod *m = mod_of(t->wins[k], l);
    if (m || (m = add_mod(t->wins[k], l)) != NULL)
      m->launches++;
  }
}

void gpujit__rwatch_time(gpujit__rwin *w, const struct gpujit_loaded *l, double ms)
{
  gpujit__rwatch_mod *m = mod_of(w, l);
  if (m)
    m->kernel_ms += ms;
}

/* A kernel result of one of `l`'s kernels: the names CUPTI gives are the module's entry names
 * (cut to the result's length). */
static bool kernel_of(const gpujit_loaded *l, const gpujit_timing_result *r)
{
  for (size_t k = 0; k < l->count; k++)
    if (strncmp(l->kernels[k].name, r->name, sizeof(r->name) - 1) == 0)
      return true;
  return false;
}

void gpujit__rwatch_time_results(gpujit__timing *t, gpujit__rwin *w, const gpujit_timing_result *res, size_t n)
{
  for (size_t i = 0; w && i < w->nmods; i++)
    for (size_t j = 0; j < n; j++)
      if (res[j].kind == GPUJIT_ACTIVITY_KERNEL && res[j].device == t->dev->info.ordinal && !res[j].missing &&
          kernel_of(w->mods[i].l, &res[j]))
        w->mods[i].kernel_ms += res[j].elapsed_ms;
}

int gpujit__rwatch_close(gpujit__timing *t, gpujit__rwin *w, double sample_ms)
{
  size_t i = 0, k = 0;
  int err = 0;
  if (!w)
    return 0;
  while (i < t->nwins && t->wins[i] != w)
    i++;
  if (i < t->nwins) {
    memmove(&t->wins[i], &t->wins[i + 1], (t->nwins - i - 1) * sizeof(*t->wins));
    t->nwins--;
  }
  if (!t->nwins) { /* the next window resets what it launches */
    t->nactive = 0;
    gpujit__device_hooks_enable(t->dev, t->depth > 0);
  }
  for (i = 0; i < w->nmods; i++) {
    gpujit__rwatch_mod m = w->mods[i];
    int e = 0;
    if (m.launches) /* a module only marked ran nothing in the window: no table */
      e = gpujit__regions_read_since(&m.report, m.l, m.mark, m.kernel_ms > 0 ? m.kernel_ms : sample_ms, m.launches);
    free(m.mark);
    m.mark = NULL;
    if (e < 0 && err == 0)
      err = e;
    if (m.launches)
      w->mods[k++] = m;
  }
  w->nmods = k;
  free_win(t->last);
  t->last = w;
  return err;
}

/* Drop `l` from a window's modules. */
static void forget_in(gpujit__rwin *w, const struct gpujit_loaded *l)
{
  gpujit__rwatch_mod *m = mod_of(w, l);
  if (!m)
    return;
  gpujit_region_report_free(m->report);
  free(m->mark);
  memmove(m, m + 1, (size_t)(w->mods + w->nmods - m - 1) * sizeof(*m));
  w->nmods--;
}

void gpujit__rwatch_forget(gpujit__timing *t, struct gpujit_loaded *l)
{
  for (size_t i = 0; i < t->nactive; i++)
    if (t->active[i] == l) {
      t->active[i] = t->active[--t->nactive];
      break;
    }
  for (size_t i = 0; i < t->nwins; i++)
    forget_in(t->wins[i], l);
  forget_in(t->last, l);
}

void gpujit__rwatch_free(gpujit__timing *t)
{
  for (size_t i = 0; i < t->nwins; i++)
    free_win(t->wins[i]);
  free_win(t->last);
  free(t->wins), free(t->active), free(t->plain);
  t->wins = NULL, t->active = NULL, t->plain = NULL, t->last = NULL;
  t->nwins = t->nactive = t->nplain = 0;
}
