/* A trace's complete events: nested per track, split into the modules whose builds enclose them,
 * and counted into each module's tables (phases, headers, templates, functions). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "trace/events.h"

/* A parsed complete event. */
typedef struct xev {
  const char *name, *cat, *detail;
  const cJSON *args;
  double ts, dur;
  double pid, tid;
  int parent; /* index of the enclosing event on the same track, -1 for none */
  int module; /* index of the module build it belongs to, -1 for none */
} xev;

typedef struct track_name {
  double pid, tid;
  const char *name;
} track_name;

typedef struct parsed {
  cJSON *root;
  xev *ev;
  size_t n;
  track_name *tracks;
  size_t ntracks;
} parsed;

static int cmp_xev(const void *pa, const void *pb)
{
  const xev *a = pa, *b = pb;
  if (a->pid != b->pid)
    return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid)
    return a->tid < b->tid ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->dur > b->dur ? -1 : (a->dur < b->dur);
}

static bool is(const char *s, const char *what) { return s && strcmp(s, what) == 0; }
static bool starts(const char *s, const char *prefix) { return s && strncmp(s, prefix, strlen(prefix)) == 0; }

static const char *arg_str(const cJSON *args, const char *key)
{
  const cJSON *v = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, key) : NULL;
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void parsed_free(parsed *p)
{
  free(p->ev);
  free(p->tracks);
  cJSON_Delete(p->root);
}

/* Parse and check the events; sort them per track and find each one's parent. */
static int parse(parsed *p, const char *name, const char *json, size_t len)
{
  cJSON *events, *e;
  size_t idx = 0, nt = 0;
  int stack[512];
  size_t depth = 0;

  memset(p, 0, sizeof(*p));
  if (!(p->root = cJSON_ParseWithLength(json, len))) {
    const char *where = cJSON_GetErrorPtr();
    long off = where && where >= json && where <= json + len ? (long)(where - json) : -1;
    return gpujit__error(GPUJIT_EPARSE, "%s: not valid JSON (error near byte %ld)", name, off);
  }
  if (cJSON_IsArray(p->root)) {
    events = p->root;
  } else if (cJSON_IsObject(p->root)) {
    events = cJSON_GetObjectItemCaseSensitive(p->root, "traceEvents");
    if (!events)
      return gpujit__error(GPUJIT_EPARSE, "%s: not a trace: no \"traceEvents\" array", name);
    if (!cJSON_IsArray(events))
      return gpujit__error(GPUJIT_EPARSE, "%s: \"traceEvents\" is not an array", name);
  } else {
    return gpujit__error(GPUJIT_EPARSE, "%s: not a trace: expected a JSON object or array", name);
  }
  nt = (size_t)cJSON_GetArraySize(events);
  if (nt && (!(p->ev = calloc(nt, sizeof(*p->ev))) || !(p->tracks = calloc(nt, sizeof(*p->tracks)))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  cJSON_ArrayForEach(e, events) {
    cJSON *ph, *nm, *ts, *dur, *pid, *tid, *cat;
    xev *x;
    idx++;
    if (!cJSON_IsObject(e))
      return gpujit__error(GPUJIT_EPARSE, "%s: event %zu is not an object", name, idx);
    if (!e->child)
      continue; /* NVRTC writes an empty first event */
    ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    if (!cJSON_IsString(ph))
      return gpujit__error(GPUJIT_EPARSE, "%s: event %zu has no \"ph\" string", name, idx);
    nm = cJSON_GetObjectItemCaseSensitive(e, "name");
    pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
    tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    if (strcmp(ph->valuestring, "M") == 0 && is(cJSON_IsString(nm) ? nm->valuestring : NULL, "thread_name") &&
        arg_str(cJSON_GetObjectItemCaseSensitive(e, "args"), "name")) {
      p->tracks[p->ntracks++] = (track_name){cJSON_IsNumber(pid) ? pid->valuedouble : 0,
                                             cJSON_IsNumber(tid) ? tid->valuedouble : 0,
                                             arg_str(cJSON_GetObjectItemCaseSensitive(e, "args"), "name")};
      continue;
    }
    if (strcmp(ph->valuestring, "X") != 0)
      continue;
    ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
    dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
    if (!cJSON_IsString(nm) || !cJSON_IsNumber(ts) || !cJSON_IsNumber(dur) || dur->valuedouble < 0)
      return gpujit__error(GPUJIT_EPARSE,
                           "%s: complete event %zu needs a string \"name\" and numeric \"ts\" and \"dur\" >= 0", name,
                           idx);
    cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
    x = &p->ev[p->n++];
    x->name = nm->valuestring;
    x->cat = cJSON_IsString(cat) ? cat->valuestring : NULL;
    x->args = cJSON_GetObjectItemCaseSensitive(e, "args");
    x->detail = arg_str(x->args, "detail");
    x->ts = ts->valuedouble;
    x->dur = dur->valuedouble;
    x->pid = cJSON_IsNumber(pid) ? pid->valuedouble : 0;
    x->tid = cJSON_IsNumber(tid) ? tid->valuedouble : 0;
    x->module = -1;
  }
  if (p->n)
    qsort(p->ev, p->n, sizeof(*p->ev), cmp_xev);
  for (size_t i = 0; i < p->n; i++) {
    xev *x = p->ev;
    while (depth && (x[stack[depth - 1]].pid != x[i].pid || x[stack[depth - 1]].tid != x[i].tid ||
                     x[stack[depth - 1]].ts + x[stack[depth - 1]].dur <= x[i].ts))
      depth--;
    x[i].parent = depth ? stack[depth - 1] : -1;
    if (depth < sizeof(stack) / sizeof(stack[0]))
      stack[depth++] = (int)i;
  }
  return 0;
}

/* "scale [scale<float>(float *, float, int)]" → group "scale<$>", instance "scale<float>(…)". */
static void template_names(const char *detail, char *group, size_t gsize, const char **instance)
{
  const char *br = strstr(detail, " [");
  size_t n = 0, depth = 0;
  *instance = detail;
  if (br) {
    size_t len = (size_t)(br - detail);
    snprintf(group, gsize, "%.*s<$>", (int)(len < gsize - 4 ? len : gsize - 4), detail);
    *instance = br + 2;
    return;
  }
  /* Collapse template arguments: "foo<int, bar<x>>::baz" → "foo<$>::baz". */
  for (const char *p = detail; *p && n + 4 < gsize; p++) {
    if (*p == '<') {
      if (depth++ == 0) {
        memcpy(group + n, "<$>", 3);
        n += 3;
      }
    } else if (*p == '>' && depth) {
      depth--;
    } else if (!depth) {
      group[n++] = *p;
    }
  }
  group[n] = '\0';
}

static const char *phase_of(const xev *e, const xev *all)
{
  const char *n = e->name;
  bool in_nvvm = e->parent >= 0 && is(all[e->parent].name, "LibNVVM");
  if (is(n, "CUDA C++ Front-End"))
    return "front end";
  /* Inside a LibNVVM event the optimizer is counted from LibNVVM itself (see add_rows). */
  if (is(n, "NVVM Module Linker") || is(n, "NVVM Optimizer"))
    return in_nvvm ? NULL : "NVVM optimizer";
  if (is(n, "NVVM CodeGen"))
    return "codegen";
  if (is(n, "Total PTXAS Time"))
    return "ptxas";
  if (is(n, "link (nvJitLink)"))
    return "link";
  if (is(n, "ptxas") && is(e->cat, "gpujit")) /* a lean build's ptxas, run after NVRTC */
    return "ptxas";
  if (is(n, "lean PTX"))
    return "lean";
  return NULL;
}

static bool is_module_span(const xev *e)
{
  return is(e->cat, "gpujit") &&
         (starts(e->name, "build ") || (starts(e->name, "look up ") && is(arg_str(e->args, "cache"), "hit")));
}

static bool is_compile_span(const xev *e)
{
  return is(e->cat, "gpujit") && (starts(e->name, "compile ") || is(e->name, "link (nvJitLink)") ||
                                  is(e->name, "ptxas") || is(e->name, "lean PTX"));
}

/* One event's rows in its profile. */
static int add_rows(gpujit__profile *p, const xev *ev, size_t i, size_t n, size_t *ptxas_unit)
{
  const xev *e = &ev[i];
  gpujit__rows *t = p->tables;
  const char *phase = phase_of(e, ev);
  char buf[1024];
  int err = 0;

  if (is(e->name, "LibNVVM")) {
    /* The NVVM optimizer is LibNVVM less its codegen: NVRTC does not always write LibNVVM's
     * sub-phases, nor do they cover all of it. Traces without LibNVVM use the sub-phases. */
    double codegen = 0;
    for (size_t k = i + 1; k < n && ev[k].ts < e->ts + e->dur; k++)
      if (ev[k].parent == (int)i && is(ev[k].name, "NVVM CodeGen"))
        codegen += ev[k].dur;
    return gpujit__rows_add(&t[GPUJIT_TRACE_PHASES], "NVVM optimizer", e->dur - codegen, e->dur - codegen, 1);
  }
  if (phase)
    return gpujit__rows_add(&t[GPUJIT_TRACE_PHASES], phase, e->dur, e->dur, 1);
  if (is(e->name, "Processing Header File") && e->detail) {
    err = gpujit__rows_add(&t[GPUJIT_TRACE_HEADERS], e->detail, e->dur, e->dur, 1);
  } else if (starts(e->name, "Instantiating Template") && e->detail) {
    const char *inst;
    template_names(e->detail, buf, sizeof(buf), &inst);
    if ((err = gpujit__rows_add(&t[GPUJIT_TRACE_TEMPLATES], buf, e->dur, e->dur, 1)) == 0) {
      /* The instance sits in brackets: "name [instance]". */
      size_t len = strlen(inst);
      if (inst != e->detail && len && inst[len - 1] == ']')
        len--;
      snprintf(buf, sizeof(buf), "%.*s", (int)len, inst);
      err = gpujit__rows_add(&t[GPUJIT_TRACE_INSTANTIATIONS], buf, e->dur, e->dur, 1);
    }
  } else if (is(e->name, "Generating Function IR") && e->detail) {
    snprintf(buf, sizeof(buf), "IR generation: %s", e->detail);
    err = gpujit__rows_add(&t[GPUJIT_TRACE_FUNCTIONS], buf, e->dur, e->dur, 1);
  } else if (is(e->name, "OptFunction") && e->detail) {
    snprintf(buf, sizeof(buf), "optimization: %s", e->detail);
    err = gpujit__rows_add(&t[GPUJIT_TRACE_FUNCTIONS], buf, e->dur, e->dur, 1);
  } else if (is(e->name, "Optimizing compilation unit")) {
    /* ptxas names no function here; units follow ptxas's entry order within the module. */
    if (e->detail)
      snprintf(buf, sizeof(buf), "ptxas: %s", e->detail);
    else
      snprintf(buf, sizeof(buf), "ptxas: compilation unit %zu", ++*ptxas_unit);
    err = gpujit__rows_add(&t[GPUJIT_TRACE_FUNCTIONS], buf, e->dur, e->dur, 1);
  }
  return err;
}

static gpujit__profile *new_module(gpujit__trace_read *r, const char *name, const char *file)
{
  gpujit__profile *m = gpujit__grow(r->modules, &r->cap, r->count, sizeof(*m), 8);
  if (!m)
    return NULL;
  r->modules = m;
  m = &r->modules[r->count];
  memset(m, 0, sizeof(*m));
  if (!(m->module = gpujit__strdup(name))) {
    gpujit__error(GPUJIT_ENOMEM, "out of memory");
    return NULL;
  }
  m->file = (char *)file;
  r->count++;
  return m;
}

/* NVRTC's worker threads have tracks "NVRTC thread N (of TID)": their events belong to the build
 * on TID's track that encloses them. */
static int owner_build(const parsed *p, const xev *e)
{
  double owner = 0;
  const char *of = NULL;
  for (size_t k = 0; k < p->ntracks && !of; k++)
    if (p->tracks[k].pid == e->pid && p->tracks[k].tid == e->tid && starts(p->tracks[k].name, "NVRTC thread "))
      of = strstr(p->tracks[k].name, "(of ");
  if (!of || sscanf(of, "(of %lf)", &owner) != 1)
    return -1;
  for (size_t k = 0; k < p->n; k++) {
    const xev *b = &p->ev[k];
    if (b->pid == e->pid && b->tid == owner && is_module_span(b) && b->ts <= e->ts && e->ts < b->ts + b->dur)
      return b->module;
  }
  return -1;
}

/* A recorded profile in a hit's trace: its tables and times become the hit's. */
static int add_recorded(gpujit__trace_read *r, const char *file, const xev *e)
{
  const cJSON *prof = cJSON_GetObjectItemCaseSensitive(e->args, "profile");
  const char *module = arg_str(e->args, "module");
  gpujit__profile rec = {0}, *m = NULL;
  char what[600];
  int err;
  snprintf(what, sizeof(what), "%s: recorded profile of '%s'", file, module ? module : "?");
  if (!module || !cJSON_IsObject(prof))
    return gpujit__error(GPUJIT_EPARSE, "%s: a \"%s\" event has no module or profile", file, e->name);
  if ((err = gpujit__profile_from_cjson(&rec, prof, what)) < 0) {
    gpujit__profile_free(&rec);
    return err;
  }
  /* The hit it was written for: same module, still without a record, nearest in time. */
  for (size_t k = 0; k < r->count; k++) {
    gpujit__profile *c = &r->modules[k];
    if (c->hit && !c->recorded && strcmp(c->module, module) == 0) {
      m = c;
      break;
    }
  }
  if (!m && !(m = new_module(r, module, file))) {
    gpujit__profile_free(&rec);
    return GPUJIT_ENOMEM;
  }
  m->hit = true;
  gpujit__profile_take_record(m, &rec);
  gpujit__profile_free(&rec);
  return 0;
}

static int split(gpujit__trace_read *r, parsed *p, const char *file)
{
  xev *ev = p->ev;
  size_t n = p->n, ptxas_unit = 0;
  int err = 0;

  /* Module builds first, then every event into the build that encloses it. */
  for (size_t i = 0; i < n; i++) {
    gpujit__profile *m;
    if (!is_module_span(&ev[i]))
      continue;
    r->gpujit = true;
    if (!(m = new_module(r, strchr(ev[i].name, ' ') + 1 + (starts(ev[i].name, "look up ") ? 3 : 0), file)))
      return GPUJIT_ENOMEM;
    m->build_us = ev[i].dur;
    m->hit = is(arg_str(ev[i].args, "cache"), "hit");
    ev[i].module = (int)(r->count - 1);
  }
  for (size_t i = 0; i < n; i++) {
    if (is(ev[i].cat, "gpujit") || is(ev[i].cat, GPUJIT__RECORDED_CAT))
      r->gpujit = true;
    if (ev[i].module < 0)
      ev[i].module = ev[i].parent >= 0 ? ev[ev[i].parent].module : owner_build(p, &ev[i]);
  }
  if (r->count == 0 && !r->gpujit) {
    /* A raw NVRTC/nvcc trace: one module, named by the source its front end compiled. */
    const char *name = NULL;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
      if (ev[i].parent < 0)
        total += ev[i].dur;
      if (!name && ev[i].parent < 0 && is(ev[i].name, "CUDA C++ Front-End") && ev[i].detail)
        name = ev[i].detail;
    }
    if (name) {
      gpujit__profile *m = new_module(r, name, file);
      if (!m)
        return GPUJIT_ENOMEM;
      m->build_us = m->compile_us = total;
      for (size_t i = 0; i < n; i++)
        ev[i].module = 0;
    }
  }
  for (size_t i = 0; i < n && err == 0; i++) {
    gpujit__profile *m = ev[i].module >= 0 ? &r->modules[ev[i].module] : &r->other;
    if (is(ev[i].cat, GPUJIT__RECORDED_CAT)) {
      if (starts(ev[i].name, GPUJIT__RECORDED_SPAN))
        err = add_recorded(r, file, &ev[i]);
      continue; /* the phases beneath it are drawn from the profile */
    }
    if (is_compile_span(&ev[i]) && ev[i].module >= 0)
      m->compile_us += ev[i].dur;
    err = add_rows(m, ev, i, n, &ptxas_unit);
  }
  for (size_t k = 0; k < r->count && err == 0; k++) {
    gpujit__profile *m = &r->modules[k];
    if (!r->gpujit)
      continue;
    if (!m->recorded) {
      m->overhead_us = m->build_us - m->compile_us > 0 ? m->build_us - m->compile_us : 0;
      if (m->hit && m->compile_us == 0)
        m->compile_us = -1; /* a hit without a record: what it would cost is not known */
    }
    if (m->overhead_us > 0)
      err = gpujit__rows_add(&m->tables[GPUJIT_TRACE_PHASES], "gpujit overhead", m->overhead_us, m->overhead_us, 1);
  }
  r->events = n;
  return err;
}

int gpujit__trace_read_json(gpujit__trace_read *out, const char *name, const char *json, size_t len)
{
  parsed p;
  int err;
  memset(out, 0, sizeof(*out));
  if ((err = parse(&p, name, json, len)) == 0 && (err = split(out, &p, name)) < 0)
    gpujit__trace_read_free(out);
  parsed_free(&p);
  return err;
}

void gpujit__trace_read_free(gpujit__trace_read *r)
{
  for (size_t i = 0; i < r->count; i++)
    gpujit__profile_free(&r->modules[i]);
  free(r->modules);
  gpujit__profile_free(&r->other);
  memset(r, 0, sizeof(*r));
}

int gpujit__profile_add_nvrtc(gpujit__profile *p, const char *json, size_t len)
{
  gpujit__trace_read r;
  int err;
  if ((err = gpujit__trace_read_json(&r, "NVRTC trace", json, len)) < 0)
    return err;
  for (size_t i = 0; i < r.count && err == 0; i++)
    for (int t = 0; t < GPUJIT__PROFILE_TABLES && err == 0; t++)
      err = gpujit__rows_merge(&p->tables[t], &r.modules[i].tables[t]);
  for (int t = 0; t < GPUJIT__PROFILE_TABLES && err == 0; t++)
    err = gpujit__rows_merge(&p->tables[t], &r.other.tables[t]);
  gpujit__trace_read_free(&r);
  return err;
}
