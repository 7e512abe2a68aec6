/* The records of compilers that are not libraries in the program: toolchain processes (ptxas,
 * nvlink, the C compilers; written by the injection library inside them, inject/tool.c) and
 * framework compiles (written by the Python adapters of the start-up hook, which declare in
 * their records whatever the report needs: how their modules tie, which spans benchmark). Each becomes a compile (pf_compile) like NVRTC's, with its stages, its lineage and
 * whatever ties it to a module: a tool's output hash, a unit's bound module handle. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/protocol.h"
#include "profile/model.h"
#include "profile/record_fields.h"

bool gpujit__profile_descends(const int *anc, int nanc, int pid)
{
  for (int i = 0; i < nanc; i++)
    if (anc[i] == pid)
      return true;
  return false;
}

void gpujit__profile_read_lineage(pf_proc *proc, const cJSON *j)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "ancestors"), *e;
  proc->nanc = 0;
  proc->tool = -1;
  if (proc->ppid > 0)
    proc->anc[proc->nanc++] = proc->ppid;
  cJSON_ArrayForEach(e, a)
  {
    if (cJSON_IsNumber(e) && e->valuedouble > 1 && e->valuedouble < 1e9 && proc->nanc < 17)
      proc->anc[proc->nanc++] = (int)e->valuedouble;
  }
  proc->adapter = pf_s_of(j, "writer")[0] != '\0';
  proc->hook = pf_i_of(j, "hook") == 1;
}

static pf_compile *new_compile(gpujit_profile *p, const pf_proc *proc, const cJSON *j, const char *kind)
{
  pf_compile *c = PF_PUSH(p->compiles);
  if (!c)
    return NULL;
  snprintf(c->kind, sizeof(c->kind), "%s", kind);
  c->pid = (int)pf_i_of(j, "pid");
  c->tid = (uint32_t)pf_u_of(j, "tid");
  c->module = c->parent = c->stage_of = -1;
  pf_copy_hash(c->from_hash, pf_s_of(j, "from_hash"));
  memcpy(c->anc, proc->anc, sizeof(c->anc));
  c->nanc = proc->nanc;
  return c;
}

/* The strings of a JSON array, each followed by `sep` ("" for none). */
static char *joined(const cJSON *a, char sep)
{
  gpujit__buf b = {0};
  const cJSON *e;
  cJSON_ArrayForEach(e, a)
  {
    if (cJSON_IsString(e) && !strchr(e->valuestring, sep)) {
      gpujit__buf_put(&b, e->valuestring, strlen(e->valuestring));
      gpujit__buf_put(&b, &sep, 1);
    }
  }
  {
    char *s = pf_dup(b.data ? b.data : "");
    gpujit__buf_free(&b);
    return s;
  }
}

/* A tool's name in the report: its input's file name (a temporary file's is its tool's). */
static char *tool_name(const cJSON *j)
{
  const char *in = pf_s_of(j, "input"), *out = pf_s_of(j, "output"), *f = in[0] ? in : out;
  const char *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
  char name[512];
  snprintf(name, sizeof(name), "%s %s", pf_s_of(j, "tool"), base[0] ? base : "(stdin)");
  return pf_dup(name);
}

static void tool_record(gpujit_profile *p, pf_proc *proc, const char *line, const cJSON *j)
{
  pf_compile *c = new_compile(p, proc, j, pf_s_of(j, "tool"));
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(j, "args"), *e;
  gpujit__buf b = {0};
  if (!c)
    return;
  c->tool = true;
  c->name = tool_name(j);
  c->key = pf_dup(pf_s_of(j, "output"));
  cJSON_ArrayForEach(e, args)
  {
    if (!cJSON_IsString(e))
      continue;
    if (b.len)
      gpujit__buf_put(&b, " ", 1);
    gpujit__buf_put(&b, e->valuestring, strlen(e->valuestring));
  }
  c->options = pf_dup(b.data ? b.data : "");
  gpujit__buf_free(&b);
  /* records before compilers proper were told apart: every tool one */
  c->proper = !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "proper")) || pf_i_of(j, "proper") != 0;
  c->pre = pf_i_of(j, "pre") != 0;
  c->script = pf_i_of(j, "script") != 0;
  c->paths = joined(cJSON_GetObjectItemCaseSensitive(j, "paths"), '\n');
  c->log = pf_dup(""), c->lib_path = pf_dup(proc->exe), c->nvrtc_trace = pf_dup("");
  c->t0 = pf_t_of(line, "t0");
  c->t1 = c->t0; /* until its end record says */
  c->result = -1; /* did not end: killed, or still running when the command ended */
  proc->tool = (int)(c - p->compiles.v);
}

static void tool_end_record(gpujit_profile *p, pf_proc *proc, const char *line, const cJSON *j)
{
  pf_compile *c;
  if (proc->tool < 0 || (size_t)proc->tool >= p->compiles.n)
    return;
  c = &p->compiles.v[proc->tool];
  c->t1 = pf_t_of(line, "t1");
  c->cpu_ns = pf_u_of(j, "cpu_ns");
  c->ended = true;
  c->result = 0; /* a parent's reap says otherwise */
  if (pf_u_of(j, "output_bytes")) {
    c->cubin_bytes = pf_u_of(j, "output_bytes");
    pf_copy_hash(c->cubin_hash, pf_s_of(j, "output_hash"));
  }
  free(c->fatbins);
  c->fatbins = joined(cJSON_GetObjectItemCaseSensitive(j, "fatbins"), ' ');
}

static void unit_record(gpujit_profile *p, pf_proc *proc, const char *line, const cJSON *j)
{
  const char *fw = pf_s_of(j, "fw"), *cache = pf_s_of(j, "cache");
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(j, "stages"), *st;
  pf_compile *c = new_compile(p, proc, j, fw[0] ? fw : "framework");
  if (!c)
    return;
  c->unit = true;
  c->name = pf_dup(pf_s_of(j, "name"));
  c->key = pf_dup(pf_s_of(j, "key"));
  c->options = pf_dup(pf_s_of(j, "detail"));
  c->log = pf_dup(pf_s_of(j, "error")), c->lib_path = pf_dup(pf_s_of(j, "version")), c->nvrtc_trace = pf_dup("");
  c->t0 = pf_t_of(line, "t0"), c->t1 = pf_t_of(line, "t1");
  c->result = c->log[0] ? 1 : 0;
  c->handle = pf_u_of(j, "module");
  c->bind_pid = c->pid;
  c->busy_ns = pf_t_of(line, "busy_ns");
  c->autotune = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "autotune"));
  c->benchmarks = c->autotune || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "benchmarks"));
  snprintf(c->cache, sizeof(c->cache), "%s", !strcmp(cache, "hit") || !strcmp(cache, "miss") ? cache : "");
  cJSON_ArrayForEach(st, stages) /* ["name", t0, t1], or ["name", null, length] */
  {
    const cJSON *n = cJSON_GetArrayItem(st, 0), *a = cJSON_GetArrayItem(st, 1), *b = cJSON_GetArrayItem(st, 2);
    pf_stage *s;
    bool known = cJSON_IsNumber(a);
    if (!cJSON_IsString(n) || !(known || cJSON_IsNull(a)) || !cJSON_IsNumber(b) || c->nstages >= PF_MAX_STAGES ||
        b->valuedouble < 0 || b->valuedouble > 1.8e19 || (known && (a->valuedouble < 0 || b->valuedouble < a->valuedouble)))
      continue;
    s = &c->stages[c->nstages++];
    snprintf(s->name, sizeof(s->name), "%s", n->valuestring);
    s->known = known;
    s->t0 = known ? (uint64_t)a->valuedouble : 0;
    s->t1 = (uint64_t)b->valuedouble; /* unknown start: the length */
  }
}

void gpujit__profile_read_compiler(gpujit_profile *p, pf_proc *proc, const char *line, const cJSON *j, int kind)
{
  switch (kind) {
  case GPUJIT_RECORD_TOOL: tool_record(p, proc, line, j); break;
  case GPUJIT_RECORD_TOOL_END: tool_end_record(p, proc, line, j); break;
  case GPUJIT_RECORD_UNIT: unit_record(p, proc, line, j); break;
  case GPUJIT_RECORD_REAP: {
    pf_reap *r = PF_PUSH(p->reaps);
    if (r)
      r->child = (int)pf_i_of(j, "child"), r->status = (int)pf_i_of(j, "status");
    break;
  }
  case GPUJIT_RECORD_SPAN: {
    pf_span *s;
    if (strcmp(pf_s_of(j, "role"), "autotune") || !(s = PF_PUSH(p->spans))) /* a role this version does not know */
      return;
    s->pid = (int)pf_i_of(j, "pid");
    s->tid = (uint32_t)pf_u_of(j, "tid");
    s->t0 = pf_t_of(line, "t0"), s->t1 = pf_t_of(line, "t1");
    s->name = pf_dup(pf_s_of(j, "name"));
    break;
  }
  case GPUJIT_RECORD_BIND: {
    pf_bind *b = PF_PUSH(p->binds);
    if (!b)
      return;
    b->pid = (int)pf_i_of(j, "pid");
    snprintf(b->fw, sizeof(b->fw), "%s", pf_s_of(j, "fw"));
    b->key = pf_dup(pf_s_of(j, "key"));
    b->handle = pf_u_of(j, "module");
    break;
  }
  default: break;
  }
}

void gpujit__profile_compilers_joined(gpujit_profile *p)
{
  for (size_t i = 0; i < p->compiles.n; i++) {
    pf_compile *c = &p->compiles.v[i];
    if (c->tool && !c->own_result) /* killed: only the reaping parent saw how */
      for (size_t r = 0; r < p->reaps.n; r++)
        if (p->reaps.v[r].child == c->pid)
          c->result = p->reaps.v[r].status;
    if (c->unit && !c->handle && c->key && c->key[0]) /* the module its compile loaded: the first bound */
      for (size_t b = 0; b < p->binds.n && !c->handle; b++)
        if (!strcmp(p->binds.v[b].fw, c->kind) && p->binds.v[b].key && !strcmp(p->binds.v[b].key, c->key))
          c->handle = p->binds.v[b].handle, c->bind_pid = p->binds.v[b].pid;
  }
  gpujit__profile_toolchain(p);
}
