/* Kernel regions read by every timer kind itself: a device has one window at a time, which the
 * outermost timed region, a benchmark's samples, a process-wide capture and a host timer (or
 * gpujit_timing_regions_begin) join; each module with regions is reset before its first launch in
 * it, and read when the last one to join leaves. That last one owns the tables, and its own
 * timing of the module's kernels gives their time (share). A module without regions costs one
 * branch per launch. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/buf.h"
#include "timing/regions.h"

static void drop_tables(gpujit__timing *t)
{
  for (size_t i = 0; i < t->nrmods; i++)
    gpujit_region_report_free(t->rmods[i].report);
  t->nrmods = 0;
}

void gpujit__rwatch_open(gpujit__timing *t)
{
  if (t->rwatch++ == 0)
    drop_tables(t);
  gpujit__device_hooks_enable(t->dev, true);
}

int gpujit__rwatch_last(const gpujit__timing *t) { return t->rwatch == 1; }

void gpujit__rwatch_launch(gpujit__timing *t, struct gpujit_loaded *l)
{
  gpujit__rwatch_mod *m;
  size_t i = 0;
  if (!t->rwatch || !l || !l->regions_events)
    return;
  while (i < t->nrmods && t->rmods[i].l != l)
    i++;
  if (i == t->nrmods) {
    if (!(m = gpujit__grow(t->rmods, &t->caprmods, t->nrmods, sizeof(*m), 4)))
      return; /* out of memory: the module goes unread, the launch unharmed */
    t->rmods = m;
    memset(&t->rmods[i], 0, sizeof(*m));
    t->rmods[i].l = l;
    t->nrmods++;
    /* in order on the stream, before the launch: the window's events only */
    gpujit_loaded_regions_reset(l);
  }
  t->rmods[i].launches++;
}

void gpujit__rwatch_time(gpujit__timing *t, const struct gpujit_loaded *l, double ms)
{
  for (size_t i = 0; t->rwatch && i < t->nrmods; i++)
    if (t->rmods[i].l == l)
      t->rmods[i].kernel_ms += ms;
}

int gpujit__rwatch_close(gpujit__timing *t, double sample_ms)
{
  int err = 0;
  if (!t->rwatch || --t->rwatch > 0)
    return 0;
  gpujit__device_hooks_enable(t->dev, t->depth > 0);
  for (size_t i = 0; i < t->nrmods; i++) {
    gpujit__rwatch_mod *m = &t->rmods[i];
    int e = gpujit_loaded_regions_read(&m->report, m->l, m->kernel_ms > 0 ? m->kernel_ms : sample_ms, m->launches);
    if (e < 0 && err == 0)
      err = e;
  }
  return err < 0 ? err : 1;
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

void gpujit__rwatch_time_results(gpujit__timing *t, const gpujit_timing_result *res, size_t n)
{
  for (size_t i = 0; t->rwatch && i < t->nrmods; i++)
    for (size_t j = 0; j < n; j++)
      if (res[j].kind == GPUJIT_ACTIVITY_KERNEL && res[j].device == t->dev->info.ordinal && !res[j].missing &&
          kernel_of(t->rmods[i].l, &res[j]))
        t->rmods[i].kernel_ms += res[j].elapsed_ms;
}

void gpujit__rwatch_forget(gpujit__timing *t, struct gpujit_loaded *l)
{
  for (size_t i = 0; i < t->nrmods; i++)
    if (t->rmods[i].l == l) {
      gpujit_region_report_free(t->rmods[i].report);
      memmove(&t->rmods[i], &t->rmods[i + 1], (t->nrmods - i - 1) * sizeof(*t->rmods));
      t->nrmods--;
      return;
    }
}

void gpujit__rwatch_free(gpujit__timing *t)
{
  drop_tables(t);
  free(t->rmods);
  t->rmods = NULL;
  t->caprmods = 0;
}
