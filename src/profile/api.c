/* gpujit/profile.h: a profile read back (the whole run, or one process over a span), its rows and
 * totals; the JSON form is json.c. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "inject/protocol.h"
#include "profile/model.h"

void pf_remove_dir(const char *dir)
{
  if (gpujit__rmrf(dir) < 0) /* best effort: what could not be removed stays, no error for the caller */
    gpujit_error_clear();
}

int gpujit_profile_options_init(gpujit_profile_options *opts, unsigned int version)
{
  static const gpujit_profile_options init = GPUJIT_PROFILE_OPTIONS_INIT;
  if (!opts)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_options_init: NULL options");
  if (version != GPUJIT_PROFILE_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "profile options version %u is not supported (this library: %u)", version,
                         GPUJIT_PROFILE_OPTIONS_VERSION);
  *opts = init;
  return 0;
}

/* Read `dir` (all of it, or one process's range) into a new profile. */
static int load(gpujit_profile **out, const char *dir, bool range, int pid, uint64_t t0, uint64_t t1)
{
  gpujit_profile *p;
  int err;
  *out = NULL;
  if (!gpujit__is_dir(dir)) /* a saved profile the caller names: it must be there */
    return gpujit__error(GPUJIT_ENOENT, "%s: no such records directory", dir);
  if (!(p = calloc(1, sizeof(*p))) || !(p->dir = gpujit__strdup(dir))) {
    free(p);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  p->range = range;
  p->range_pid = pid;
  p->range_t0 = t0, p->range_t1 = t1;
  if ((err = gpujit__profile_read(p, dir)) < 0 || (err = gpujit__profile_attribute(p)) < 0 ||
      (err = gpujit__profile_views(p)) < 0) {
    gpujit_profile_free(p);
    return err;
  }
  if (range)
    p->totals.wall_ms = (double)(t1 - t0) / 1e6;
  *out = p;
  return 0;
}

int gpujit_profile_load(gpujit_profile **out, const char *dir)
{
  if (!out || !dir)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_load: NULL argument");
  return load(out, dir, false, 0, 0, 0);
}

int gpujit_profile_load_range(gpujit_profile **out, const char *dir, int pid, uint64_t t0_ns, uint64_t t1_ns)
{
  if (!out || !dir)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_load_range: NULL argument");
  *out = NULL;
  if (t1_ns < t0_ns)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_load_range: the range ends before it starts");
  if (pid == (int)getpid()) { /* this process: what CUPTI holds goes to its records first */
    gpujit_record_flush_fn flush = (gpujit_record_flush_fn)dlsym(RTLD_DEFAULT, GPUJIT_RECORD_FLUSH_SYMBOL);
    if (flush)
      flush();
  }
  return load(out, dir, true, pid, t0_ns, t1_ns);
}

int gpujit_profile_recording(const char **records_dir)
{
  const char *dir = getenv(GPUJIT_ENV(DIR));
  if (records_dir)
    *records_dir = NULL;
  if (!dir || !*dir || !dlsym(RTLD_DEFAULT, GPUJIT_RECORD_FLUSH_SYMBOL))
    return 0;
  if (records_dir)
    *records_dir = dir;
  return 1;
}

void gpujit_profile_free(gpujit_profile *p)
{
  if (!p)
    return;
  if (p->own_dir && p->dir)
    pf_remove_dir(p->dir);
  for (size_t i = 0; i < p->procs.n; i++)
    free(p->procs.v[i].exe), free(p->procs.v[i].cmd), free(p->procs.v[i].schedule);
  gpujit__profile_steps_free(p);
  gpujit__profile_regions_free(p);
  for (size_t i = 0; i < p->compiles.n; i++) {
    gpujit__profile_compile_free(&p->compiles.v[i]);
  }
  for (size_t i = 0; i < p->loads.n; i++)
    free(p->loads.v[i].file);
  for (size_t i = 0; i < p->binds.n; i++)
    free(p->binds.v[i].key);
  for (size_t i = 0; i < p->spans.n; i++)
    free(p->spans.v[i].name);
  free(p->binds.v), free(p->reaps.v), free(p->spans.v);
  for (size_t i = 0; i < p->ksums.n; i++)
    free(p->ksums.v[i].name);
  for (size_t i = 0; i < p->ops.n; i++)
    free(p->ops.v[i].name);
  for (size_t i = 0; i < p->nvtx.n; i++)
    free(p->nvtx.v[i].name);
  for (size_t i = 0; i < p->nrows; i++)
    free(p->row_names[i]), free(p->row_kernels[i]);
  free(p->procs.v), free(p->compiles.v), free(p->loads.v), free(p->ksums.v), free(p->osums.v);
  free(p->jits.v), free(p->ops.v), free(p->nvtx.v), free(p->rows), free(p->row_names), free(p->row_kernels), free(p->devices);
  free(p->compile_rows), free(p->process_rows), free(p->compilers), free(p->stage_rows);
  gpujit__buf_free(&p->notes);
  free(p->dir), free(p->command);
  free(p);
}

size_t gpujit_profile_modules(const gpujit_profile *p, const gpujit_profile_module **rows)
{
  if (rows)
    *rows = p ? p->rows : NULL;
  return p ? p->nrows : 0;
}

size_t gpujit_profile_devices(const gpujit_profile *p, const gpujit_profile_device **rows)
{
  if (rows)
    *rows = p ? p->devices : NULL;
  return p ? p->ndevices : 0;
}

void gpujit_profile_totals_get(const gpujit_profile *p, gpujit_profile_totals *out)
{
  if (out)
    memset(out, 0, sizeof(*out));
  if (p && out)
    *out = p->totals;
}

const char *gpujit_profile_notes(const gpujit_profile *p) { return p && p->notes.data ? p->notes.data : ""; }

const char *gpujit_profile_command(const gpujit_profile *p) { return p && p->command ? p->command : ""; }

