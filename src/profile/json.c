/* gpujit_profile_json: a profile as JSON, the form `gpujit profile --json` writes (its totals,
 * module rows, compiles, loads, devices and notes). */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "profile/model.h"

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
