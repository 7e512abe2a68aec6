/* gpujit/profile.h: a profile read back, its rows, totals and JSON. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
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
  DIR *d = opendir(dir);
  struct dirent *e;
  if (!d)
    return;
  while ((e = readdir(d)) != NULL) {
    char path[PATH_MAX];
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
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
  if (!(p = calloc(1, sizeof(*p))) || !(p->dir = gpujit__strdup(dir))) {
    free(p);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  p->range = range;
  p->range_pid = pid;
  p->range_t0 = t0, p->range_t1 = t1;
  if ((err = gpujit__profile_read(p, dir)) < 0 || (err = gpujit__profile_attribute(p)) < 0) {
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
    free(p->procs.v[i].exe), free(p->procs.v[i].cmd);
  for (size_t i = 0; i < p->compiles.n; i++) {
    pf_compile *c = &p->compiles.v[i];
    free(c->name), free(c->options), free(c->log), free(c->lib_path), free(c->nvrtc_trace);
  }
  for (size_t i = 0; i < p->loads.n; i++)
    free(p->loads.v[i].file);
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
  gpujit__buf_free(&p->notes);
  free(p->dir);
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

static double ms(uint64_t a, uint64_t b) { return b > a ? (double)(b - a) / 1e6 : 0; }

int gpujit_profile_json(const gpujit_profile *p, char **out)
{
  const gpujit_profile_totals *t = &p->totals;
  cJSON *j = cJSON_CreateObject(), *o, *a;
  const char *notes = gpujit_profile_notes(p);
  if (!out || !j)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_json: NULL argument");
  o = cJSON_AddObjectToObject(j, "totals");
  cJSON_AddNumberToObject(o, "exit_status", t->exit_status);
  cJSON_AddNumberToObject(o, "signal", t->signal);
  cJSON_AddNumberToObject(o, "wall_ms", t->wall_ms);
  cJSON_AddNumberToObject(o, "processes", (double)t->processes);
  cJSON_AddNumberToObject(o, "processes_partial", (double)t->processes_partial);
  cJSON_AddBoolToObject(o, "partial", t->partial);
  cJSON_AddNumberToObject(o, "compiles", (double)t->compiles);
  cJSON_AddNumberToObject(o, "failed", (double)t->failed);
  cJSON_AddNumberToObject(o, "repeats", (double)t->repeats);
  cJSON_AddNumberToObject(o, "compile_ms", t->compile_ms);
  cJSON_AddNumberToObject(o, "repeat_ms", t->repeat_ms);
  cJSON_AddNumberToObject(o, "link_ms", t->link_ms);
  cJSON_AddNumberToObject(o, "loads", (double)t->loads);
  cJSON_AddNumberToObject(o, "load_ms", t->load_ms);
  cJSON_AddNumberToObject(o, "jit_ms", t->jit_ms);
  cJSON_AddNumberToObject(o, "launches", (double)t->launches);
  cJSON_AddNumberToObject(o, "gpu_ms", t->gpu_ms);
  cJSON_AddNumberToObject(o, "untraced", (double)t->untraced);
  cJSON_AddNumberToObject(o, "lost", (double)t->lost);
  cJSON_AddBoolToObject(o, "gpu_recorded", t->gpu_recorded);
  o = cJSON_AddObjectToObject(j, "options");
  cJSON_AddBoolToObject(o, "lineinfo", p->opts.lineinfo);
  cJSON_AddBoolToObject(o, "nvrtc_trace", p->opts.nvrtc_trace);
  a = cJSON_AddArrayToObject(j, "devices");
  for (size_t i = 0; i < p->ndevices; i++) {
    const gpujit_profile_device *d = &p->devices[i];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "device", d->device);
    cJSON_AddNumberToObject(e, "launches", (double)d->launches);
    cJSON_AddNumberToObject(e, "kernel_ms", d->kernel_ms);
    cJSON_AddNumberToObject(e, "copies", (double)d->copies);
    cJSON_AddNumberToObject(e, "copy_bytes", (double)d->copy_bytes);
    cJSON_AddNumberToObject(e, "copy_ms", d->copy_ms);
    cJSON_AddNumberToObject(e, "memsets", (double)d->memsets);
    cJSON_AddNumberToObject(e, "memset_ms", d->memset_ms);
    cJSON_AddItemToArray(a, e);
  }
  a = cJSON_AddArrayToObject(j, "modules");
  for (size_t i = 0; i < p->nrows; i++) {
    const gpujit_profile_module *m = &p->rows[i];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", m->name);
    cJSON_AddStringToObject(e, "kernel", m->kernel);
    cJSON_AddStringToObject(e, "origin", m->origin);
    cJSON_AddStringToObject(e, "image", m->image);
    cJSON_AddNumberToObject(e, "image_bytes", (double)m->image_bytes);
    cJSON_AddNumberToObject(e, "pid", m->pid);
    cJSON_AddNumberToObject(e, "loads", (double)m->loads);
    cJSON_AddNumberToObject(e, "compiles", (double)m->compiles);
    cJSON_AddNumberToObject(e, "repeats", (double)m->repeats);
    cJSON_AddNumberToObject(e, "compile_ms", m->compile_ms);
    cJSON_AddNumberToObject(e, "repeat_ms", m->repeat_ms);
    cJSON_AddNumberToObject(e, "load_ms", m->load_ms);
    cJSON_AddNumberToObject(e, "jit_ms", m->jit_ms);
    cJSON_AddNumberToObject(e, "jit_cache_hits", (double)m->jit_cache_hits);
    cJSON_AddNumberToObject(e, "kernels", (double)m->kernels);
    cJSON_AddNumberToObject(e, "launches", (double)m->launches);
    cJSON_AddNumberToObject(e, "gpu_ms", m->gpu_ms);
    cJSON_AddNumberToObject(e, "break_even_launches", m->break_even);
    cJSON_AddItemToArray(a, e);
  }
  a = cJSON_AddArrayToObject(j, "compiles");
  for (size_t i = 0; i < p->compiles.n; i++) {
    const pf_compile *c = &p->compiles.v[i];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "kind", c->kind);
    cJSON_AddStringToObject(e, "name", c->name);
    cJSON_AddNumberToObject(e, "pid", c->pid);
    cJSON_AddNumberToObject(e, "tid", c->tid);
    cJSON_AddStringToObject(e, "options", c->options);
    cJSON_AddNumberToObject(e, "headers", c->headers);
    cJSON_AddNumberToObject(e, "ms", ms(c->t0, c->t1));
    cJSON_AddNumberToObject(e, "result", c->result);
    if (c->log[0])
      cJSON_AddStringToObject(e, "log", c->log);
    cJSON_AddBoolToObject(e, "repeat", c->repeat);
    if (c->ptx_bytes)
      cJSON_AddNumberToObject(e, "ptx_bytes", (double)c->ptx_bytes);
    if (c->cubin_bytes)
      cJSON_AddNumberToObject(e, "cubin_bytes", (double)c->cubin_bytes);
    if (c->ltoir_bytes)
      cJSON_AddNumberToObject(e, "ltoir_bytes", (double)c->ltoir_bytes);
    cJSON_AddStringToObject(e, "library", c->lib_path);
    cJSON_AddStringToObject(e, "module", c->module >= 0 ? p->rows[c->module].name : "");
    cJSON_AddItemToArray(a, e);
  }
  a = cJSON_AddArrayToObject(j, "processes");
  for (size_t i = 0; i < p->procs.n; i++) {
    const pf_proc *pr = &p->procs.v[i];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "pid", pr->pid);
    cJSON_AddNumberToObject(e, "ppid", pr->ppid);
    cJSON_AddStringToObject(e, "command", pr->cmd ? pr->cmd : "");
    cJSON_AddBoolToObject(e, "ended", pr->ended);
    cJSON_AddBoolToObject(e, "gpu_recorded", pr->gpu);
    cJSON_AddItemToArray(a, e);
  }
  a = cJSON_AddArrayToObject(j, "notes");
  for (const char *n = notes; *n;) {
    size_t len = strcspn(n, "\n");
    char *line = strndup(n, len);
    if (line)
      cJSON_AddItemToArray(a, cJSON_CreateString(line));
    free(line);
    n += len + (n[len] == '\n');
  }
  *out = cJSON_Print(j);
  cJSON_Delete(j);
  return *out ? 0 : gpujit__error(GPUJIT_ENOMEM, "out of memory");
}
