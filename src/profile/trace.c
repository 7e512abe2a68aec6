/*
 * A profile as a Trace Event Format file. Host tracks: the process's pid and each thread's tid,
 * with compile spans in the form `gpujit trace analyze` reads ("build NAME" enclosing
 * "compile NAME", category gpujit; NVRTC's own phases beneath them with --nvrtc-trace), module
 * loads and NVTX ranges. GPU tracks: a process per device (pid 2^30 + device), a thread per
 * stream, with kernels, copies and memsets. A flow goes from each compile to the first launch of
 * the module its image became. Recorded steps: a "steps" track in their process with a slice
 * each, each launch's host side on its thread with a flow to what it launched. Every id fits in
 * 32 bits (Perfetto's importer).
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/demangle.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/output.h"
#include "profile/model.h"

#define GPU_PID (1u << 30)

static __thread uint64_t base_ns; /* the earliest time of the trace: its zero */

static double us(uint64_t ns) { return ns > base_ns ? (double)(ns - base_ns) / 1e3 : 0; }

static cJSON *ev(cJSON *arr, const char *ph, const char *cat, const char *name, double pid, double tid, double ts)
{
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "ph", ph);
  if (cat)
    cJSON_AddStringToObject(e, "cat", cat);
  cJSON_AddStringToObject(e, "name", name);
  cJSON_AddNumberToObject(e, "pid", pid);
  cJSON_AddNumberToObject(e, "tid", tid);
  cJSON_AddNumberToObject(e, "ts", ts);
  cJSON_AddItemToArray(arr, e);
  return e;
}

static cJSON *span(cJSON *arr, const char *cat, const char *name, double pid, double tid, uint64_t s, uint64_t e)
{
  cJSON *x = ev(arr, "X", cat, name, pid, tid, us(s));
  cJSON_AddNumberToObject(x, "dur", e > s ? (double)(e - s) / 1e3 : 0);
  return x;
}

static void meta(cJSON *arr, const char *what, double pid, double tid, const char *name)
{
  cJSON *m = ev(arr, "M", NULL, what, pid, tid, 0);
  cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "args"), "name", name);
}

/* Names for tracks, once each. */
typedef struct seen {
  double pid, tid;
} seen;

static bool first(seen **v, size_t *n, double pid, double tid)
{
  seen *g;
  for (size_t i = 0; i < *n; i++)
    if ((*v)[i].pid == pid && (*v)[i].tid == tid)
      return false;
  if (!(g = realloc(*v, (*n + 1) * sizeof(*g))))
    return false;
  *v = g;
  g[(*n)++] = (seen){pid, tid};
  return true;
}

static void host_track(cJSON *arr, seen **v, size_t *n, const gpujit_profile *p, int pid, uint32_t tid)
{
  char name[160];
  if (first(v, n, pid, -1)) {
    const char *cmd = "";
    for (size_t i = 0; i < p->procs.n; i++)
      if (p->procs.v[i].pid == pid && p->procs.v[i].cmd)
        cmd = p->procs.v[i].cmd;
    snprintf(name, sizeof(name), "%d: %.100s", pid, cmd);
    meta(arr, "process_name", pid, 0, name);
  }
  if (first(v, n, pid, tid)) {
    snprintf(name, sizeof(name), (int)tid == pid ? "main thread %u" : "thread %u", tid);
    meta(arr, "thread_name", pid, tid, name);
  }
}

/* The file of a compile's NVRTC phases, read from the profile's own records directory: the
 * injection library writes it there (inject/nvrtc.c), and a saved profile made elsewhere names
 * whatever path its records say — a report reads what the profile holds, never the reader's files.
 * Only the recorded name's last component counts; a link there is not followed. */
static int read_phases(gpujit__buf *b, const gpujit_profile *p, const pf_compile *c)
{
  const char *name = c->nvrtc_trace ? gpujit__basename(c->nvrtc_trace) : "";
  char path[PATH_MAX];
  struct stat st;
  if (!p->dir || !*name || !strcmp(name, ".") || !strcmp(name, "..") ||
      (size_t)snprintf(path, sizeof(path), "%s/%s", p->dir, name) >= sizeof(path) || lstat(path, &st) != 0 ||
      !S_ISREG(st.st_mode))
    return -1;
  return gpujit__file_read(b, path);
}

/* NVRTC's own phases of a compile, moved to start where the compile started. */
static void nvrtc_phases(cJSON *arr, const gpujit_profile *p, const pf_compile *c)
{
  gpujit__buf b = {0};
  cJSON *j, *events, *e;
  double base = -1;
  if (read_phases(&b, p, c) < 0) {
    gpujit_error_clear();
    return;
  }
  j = cJSON_ParseWithLength(b.data, b.len);
  events = cJSON_IsArray(j) ? j : cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
  cJSON_ArrayForEach(e, events)
  {
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
    if (cJSON_IsNumber(ts) && (base < 0 || ts->valuedouble < base))
      base = ts->valuedouble;
  }
  cJSON_ArrayForEach(e, events)
  {
    const char *ph = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "ph"));
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts"), *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
    cJSON *x, *args;
    if (!ph || strcmp(ph, "X") || !cJSON_IsNumber(ts) || !name)
      continue;
    x = ev(arr, "X", "nvrtc", name, c->pid, c->tid, us(c->t0) + ts->valuedouble - base);
    cJSON_AddNumberToObject(x, "dur", cJSON_IsNumber(dur) ? dur->valuedouble : 0);
    if ((args = cJSON_GetObjectItemCaseSensitive(e, "args")) != NULL)
      cJSON_AddItemToObject(x, "args", cJSON_Duplicate(args, 1));
  }
  cJSON_Delete(j);
  gpujit__buf_free(&b);
}

static void compiles(cJSON *arr, seen **v, size_t *n, const gpujit_profile *p)
{
  for (size_t i = 0; i < p->compiles.n; i++) {
    const pf_compile *c = &p->compiles.v[i];
    char name[300];
    cJSON *x, *args;
    bool link = !strcmp(c->kind, "nvjitlink");
    host_track(arr, v, n, p, c->pid, c->tid);
    if (c->parent >= 0) { /* inside another's compile (ptxas under a framework's compile): a part of that build, not one */
      snprintf(name, sizeof(name), "%s%s%s", strncmp(c->name, c->kind, strlen(c->kind)) ? c->kind : "",
               strncmp(c->name, c->kind, strlen(c->kind)) ? " " : "", c->name);
      args = cJSON_AddObjectToObject(span(arr, "gpujit.profile", name, c->pid, c->tid, c->t0, c->t1), "args");
      cJSON_AddStringToObject(args, "compiler", c->kind);
      cJSON_AddStringToObject(args, "within", p->compiles.v[c->parent].name);
      cJSON_AddNumberToObject(args, "result", c->result);
      continue;
    }
    snprintf(name, sizeof(name), "build %s", c->name);
    x = span(arr, "gpujit", name, c->pid, c->tid, c->t0, c->t1);
    args = cJSON_AddObjectToObject(x, "args");
    cJSON_AddStringToObject(args, "cache", "miss");
    cJSON_AddStringToObject(args, "compiler", c->kind);
    cJSON_AddStringToObject(args, "options", c->options);
    cJSON_AddNumberToObject(args, "result", c->result);
    if (c->stage_of >= 0) /* gpujit's ptxas after its NVRTC: a later stage of that build */
      cJSON_AddStringToObject(args, "stage_of", p->compiles.v[c->stage_of].name);
    if (c->log[0])
      cJSON_AddStringToObject(args, "error", c->log);
    if (c->repeat)
      cJSON_AddBoolToObject(args, "repeat", true);
    if (c->module >= 0)
      cJSON_AddStringToObject(args, "module", p->rows[c->module].name);
    if (c->unit && !strcmp(c->cache, "hit"))
      cJSON_ReplaceItemInObject(args, "cache", cJSON_CreateString("hit"));
    snprintf(name, sizeof(name), link ? "link (nvJitLink)" : "compile %s", c->name);
    /* the compile itself: its framework's measure where given (its stages, not the wait before them) */
    span(arr, "gpujit", name, c->pid, c->tid, c->busy_ns && c->busy_ns < c->t1 - c->t0 ? c->t1 - c->busy_ns : c->t0, c->t1);
    nvrtc_phases(arr, p, c);
    for (int k = 0; k < c->nstages; k++) /* the framework's stages, where it said when */
      if (c->stages[k].known)
        span(arr, "gpujit.stage", c->stages[k].name, c->pid, c->tid, c->stages[k].t0, c->stages[k].t1);
  }
}

static void loads_and_ranges(cJSON *arr, seen **v, size_t *n, const gpujit_profile *p)
{
  for (size_t i = 0; i < p->loads.n; i++) {
    const pf_load *l = &p->loads.v[i];
    char name[300];
    cJSON *args;
    host_track(arr, v, n, p, l->pid, l->tid);
    snprintf(name, sizeof(name), "load %s", l->module >= 0 ? p->rows[l->module].name : l->api);
    args = cJSON_AddObjectToObject(span(arr, "gpujit.profile", name, l->pid, l->tid, l->t0, l->t1), "args");
    cJSON_AddStringToObject(args, "api", l->api);
    cJSON_AddStringToObject(args, "image", l->image);
    cJSON_AddNumberToObject(args, "bytes", (double)l->bytes);
    cJSON_AddNumberToObject(args, "result", l->result);
  }
  for (size_t i = 0; i < p->nvtx.n; i++) {
    const pf_nvtx *r = &p->nvtx.v[i];
    uint32_t tid = r->thread ? r->thread : (uint32_t)r->pid;
    host_track(arr, v, n, p, r->pid, tid);
    span(arr, "nvtx", r->name, r->pid, tid, r->s, r->e);
  }
}

static void gpu(cJSON *arr, seen **v, size_t *n, const gpujit_profile *p)
{
  for (size_t i = 0; i < p->ops.n; i++) {
    const pf_op *o = &p->ops.v[i];
    double pid = GPU_PID + o->device;
    char name[64];
    cJSON *args;
    if (first(v, n, pid, -1)) {
      snprintf(name, sizeof(name), "GPU %u", o->device);
      meta(arr, "process_name", pid, 0, name);
    }
    if (first(v, n, pid, o->stream + 1.0)) { /* tid 0 is no track's: streams from 1 */
      snprintf(name, sizeof(name), "stream %u", o->stream);
      meta(arr, "thread_name", pid, o->stream + 1.0, name);
    }
    if (o->kind == 'k') {
      int r = -1;
      for (size_t k = 0; k < p->loads.n && o->handle; k++)
        if (p->loads.v[k].pid == o->pid && p->loads.v[k].handle == o->handle && p->loads.v[k].result == 0)
          r = p->loads.v[k].module;
      char shown[512];
      gpujit__kernel_name(o->name, shown, sizeof(shown)); /* as people read it; the symbol in its args */
      args = cJSON_AddObjectToObject(span(arr, "kernel", shown, pid, o->stream + 1.0, o->s, o->e), "args");
      cJSON_AddStringToObject(args, "symbol", o->name);
      cJSON_AddStringToObject(args, "module", r >= 0 ? p->rows[r].name : "");
      cJSON_AddNumberToObject(args, "process", o->pid);
    } else {
      snprintf(name, sizeof(name), o->kind == 'c' ? "copy %s" : "%s", o->name);
      args = cJSON_AddObjectToObject(span(arr, o->kind == 'c' ? "copy" : "memset", name, pid, o->stream + 1.0, o->s, o->e), "args");
      cJSON_AddNumberToObject(args, "bytes", (double)o->bytes);
    }
  }
}

/* Kernel regions' calls (the "kslices" the injection library kept): a process of tracks per
 * profiled process, a track per SM, a unit overlapping another on one SM on a further track
 * ("SM 12 #2"), as `gpujit run --time-trace` draws them. */
#define REGION_PID (GPU_PID + (1u << 20)) /* + the profiled process's pid */
#define SM_LANES 8

typedef struct sm_lanes {
  int pid;
  uint32_t sm;
  uint64_t busy_until[SM_LANES];
} sm_lanes;

static unsigned lane_of(sm_lanes **all, size_t *n, int pid, uint32_t sm, uint64_t first, uint64_t last)
{
  sm_lanes *l = NULL, *grown;
  unsigned k = 0;
  for (size_t i = 0; i < *n && !l; i++)
    if ((*all)[i].pid == pid && (*all)[i].sm == sm)
      l = &(*all)[i];
  if (!l) {
    if (!(grown = realloc(*all, (*n + 1) * sizeof(**all))))
      return 0;
    *all = grown;
    l = &grown[(*n)++];
    memset(l, 0, sizeof(*l));
    l->pid = pid, l->sm = sm;
  }
  while (k + 1 < SM_LANES && l->busy_until[k] > first)
    k++;
  if (last > l->busy_until[k])
    l->busy_until[k] = last;
  return k;
}

static const char *region_name(const gpujit_profile *p, const pf_kslice *s)
{
  for (size_t k = 0; k < p->kregions.n; k++) {
    const pf_kregion *r = &p->kregions.v[k];
    if (r->pid == s->pid && r->read == s->read && r->name && k + s->region < p->kregions.n &&
        p->kregions.v[k + s->region].read == s->read && p->kregions.v[k + s->region].pid == s->pid)
      return p->kregions.v[k + s->region].name ? p->kregions.v[k + s->region].name : "region";
  }
  return "region";
}

static void region_slices(cJSON *arr, seen **v, size_t *n, const gpujit_profile *p)
{
  sm_lanes *lanes = NULL;
  size_t nlanes = 0;
  for (size_t a = 0, b; a < p->kslices.n; a = b) {
    const pf_kslice *s0 = &p->kslices.v[a];
    uint64_t t_first = UINT64_MAX, t_last = 0;
    double pid = REGION_PID + (double)s0->pid, tid;
    char name[64];
    for (b = a; b < p->kslices.n && p->kslices.v[b].pid == s0->pid && p->kslices.v[b].read == s0->read &&
                p->kslices.v[b].unit == s0->unit && p->kslices.v[b].sm == s0->sm;
         b++) {
      t_first = p->kslices.v[b].s < t_first ? p->kslices.v[b].s : t_first;
      t_last = p->kslices.v[b].s + p->kslices.v[b].d > t_last ? p->kslices.v[b].s + p->kslices.v[b].d : t_last;
    }
    unsigned lane = lane_of(&lanes, &nlanes, s0->pid, s0->sm, t_first, t_last);
    tid = (double)s0->sm * SM_LANES + lane + 1;
    if (first(v, n, pid, -1)) {
      snprintf(name, sizeof(name), "kernel regions of %d", s0->pid);
      meta(arr, "process_name", pid, 0, name);
    }
    if (first(v, n, pid, tid)) {
      if (lane)
        snprintf(name, sizeof(name), "SM %u #%u", s0->sm, lane + 1);
      else
        snprintf(name, sizeof(name), "SM %u", s0->sm);
      meta(arr, "thread_name", pid, tid, name);
    }
    for (size_t i = a; i < b; i++) {
      const pf_kslice *s = &p->kslices.v[i];
      cJSON *args = cJSON_AddObjectToObject(span(arr, "region", region_name(p, s), pid, tid, s->s, s->s + s->d), "args");
      cJSON_AddNumberToObject(args, "cycles", (double)s->cycles);
      cJSON_AddNumberToObject(args, "unit", s->unit);
      cJSON_AddNumberToObject(args, "sm", s->sm);
    }
  }
  free(lanes);
}

/* From each compile to the first traced launch of its module. @return the next flow id. */
static unsigned flows(cJSON *arr, const gpujit_profile *p)
{
  unsigned id = 1;
  for (size_t i = 0; i < p->compiles.n; i++) {
    const pf_compile *c = &p->compiles.v[i];
    const pf_op *firstk = NULL;
    cJSON *e;
    if (c->module < 0)
      continue;
    for (size_t k = 0; k < p->ops.n; k++) {
      const pf_op *o = &p->ops.v[k];
      bool mine = false;
      if (o->kind != 'k' || o->s < c->t1 || (firstk && o->s >= firstk->s))
        continue;
      for (size_t l = 0; l < p->loads.n && !mine; l++)
        mine = p->loads.v[l].pid == o->pid && p->loads.v[l].handle == o->handle && p->loads.v[l].module == c->module;
      if (mine)
        firstk = o;
    }
    if (!firstk)
      continue;
    e = ev(arr, "s", "flow", "compile to first launch", c->pid, c->tid, us(c->t1) - 0.001);
    cJSON_AddNumberToObject(e, "id", id);
    e = ev(arr, "f", "flow", "compile to first launch", GPU_PID + firstk->device, firstk->stream + 1.0, us(firstk->s));
    cJSON_AddNumberToObject(e, "id", id);
    cJSON_AddStringToObject(e, "bp", "e");
    id++;
  }
  return id;
}

#define STEPS_TID (1u << 30) /* the process's "steps" track: a virtual track's id, above any thread's (trace/sink.h) */

/* The recorded steps (warmup and active) as slices on a "steps" track of their process. */
static void step_slices(cJSON *arr, seen **v, size_t *n, const gpujit_profile *p)
{
  for (size_t i = 0; i < p->steps.n; i++) {
    const pf_step *s = &p->steps.v[i];
    char name[64];
    bool complete;
    uint64_t end;
    cJSON *args;
    if (strcmp(s->phase, "active") && strcmp(s->phase, "warmup"))
      continue;
    host_track(arr, v, n, p, s->pid, s->pid);
    if (first(v, n, s->pid, STEPS_TID))
      meta(arr, "thread_name", s->pid, STEPS_TID, "steps");
    end = gpujit__profile_step_end(p, i, &complete);
    snprintf(name, sizeof(name), "step %llu", (unsigned long long)s->n);
    args = cJSON_AddObjectToObject(span(arr, "step", name, s->pid, STEPS_TID, s->t, end), "args");
    cJSON_AddStringToObject(args, "phase", s->phase);
    cJSON_AddNumberToObject(args, "cycle", s->cycle);
    cJSON_AddStringToObject(args, "src", s->src);
    cJSON_AddBoolToObject(args, "complete", complete);
  }
}

static __thread const gpujit_profile *sort_p;
static int op_by_corr(const void *a, const void *b)
{
  const pf_op *x = &sort_p->ops.v[*(const size_t *)a], *y = &sort_p->ops.v[*(const size_t *)b];
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* The launches' host sides on their threads, each with a flow to the kernel, copy or memset it
 * launched (as frameworks' profilers draw them: "s" in the launch, "f" binding to the GPU slice). */
static int launches(cJSON *arr, seen **v, size_t *n, const gpujit_profile *p, unsigned id)
{
  size_t *by = calloc(p->ops.n + 1, sizeof(*by));
  if (!by)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t i = 0; i < p->ops.n; i++)
    by[i] = i;
  sort_p = p;
  qsort(by, p->ops.n, sizeof(*by), op_by_corr);
  for (size_t i = 0; i < p->launches.n; i++) {
    const pf_launch *l = &p->launches.v[i];
    size_t lo = 0, hi = p->ops.n;
    cJSON *e;
    host_track(arr, v, n, p, l->pid, l->tid);
    e = span(arr, "launch", l->api[0] ? l->api : "launch", l->pid, l->tid, l->t0, l->t1);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(e, "args"), "correlation", (double)l->corr);
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      const pf_op *o = &p->ops.v[by[mid]];
      if (o->pid < l->pid || (o->pid == l->pid && o->corr < l->corr))
        lo = mid + 1;
      else
        hi = mid;
    }
    if (!l->corr || lo == p->ops.n || p->ops.v[by[lo]].pid != l->pid || p->ops.v[by[lo]].corr != l->corr)
      continue;
    const pf_op *o = &p->ops.v[by[lo]];
    e = ev(arr, "s", "launch", "launch", l->pid, l->tid, us(l->t0));
    cJSON_AddNumberToObject(e, "id", id);
    e = ev(arr, "f", "launch", "launch", GPU_PID + o->device, o->stream + 1.0, us(o->s));
    cJSON_AddNumberToObject(e, "id", id++);
    cJSON_AddStringToObject(e, "bp", "e");
  }
  free(by);
  return 0;
}

int gpujit_profile_trace(const gpujit_profile *p, const char *path)
{
  cJSON *j, *arr;
  seen *v = NULL;
  size_t n = 0;
  char *text;
  int err;
  if (!p || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_trace: NULL argument");
  base_ns = UINT64_MAX;
  for (size_t i = 0; i < p->compiles.n; i++)
    base_ns = p->compiles.v[i].t0 && p->compiles.v[i].t0 < base_ns ? p->compiles.v[i].t0 : base_ns;
  for (size_t i = 0; i < p->loads.n; i++)
    base_ns = p->loads.v[i].t0 && p->loads.v[i].t0 < base_ns ? p->loads.v[i].t0 : base_ns;
  for (size_t i = 0; i < p->ops.n; i++)
    base_ns = p->ops.v[i].s && p->ops.v[i].s < base_ns ? p->ops.v[i].s : base_ns;
  for (size_t i = 0; i < p->procs.n; i++)
    base_ns = p->procs.v[i].t0 && p->procs.v[i].t0 < base_ns ? p->procs.v[i].t0 : base_ns;
  if (base_ns == UINT64_MAX)
    base_ns = 0;
  j = cJSON_CreateObject();
  arr = cJSON_AddArrayToObject(j, "traceEvents");
  compiles(arr, &v, &n, p);
  loads_and_ranges(arr, &v, &n, p);
  gpu(arr, &v, &n, p);
  step_slices(arr, &v, &n, p);
  region_slices(arr, &v, &n, p);
  if ((err = launches(arr, &v, &n, p, flows(arr, p))) < 0) {
    free(v);
    cJSON_Delete(j);
    return err;
  }
  cJSON_AddStringToObject(j, "displayTimeUnit", "ms");
  {
    cJSON *o = cJSON_AddObjectToObject(j, "otherData");
    cJSON_AddStringToObject(o, "producer", "gpujit " GPUJIT_VERSION_STRING " profile");
    cJSON_AddNumberToObject(o, "exit_status", p->totals.exit_status);
    cJSON_AddBoolToObject(o, "partial", p->totals.partial);
    cJSON_AddBoolToObject(o, "lineinfo_added", p->opts.lineinfo);
    cJSON_AddBoolToObject(o, "nvrtc_trace_added", p->opts.nvrtc_trace);
    cJSON_AddNumberToObject(o, "zero_ns", (double)base_ns);
  }
  free(v);
  text = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  if (!text)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  err = gpujit__output_write(path, text, strlen(text));
  free(text);
  return err;
}
