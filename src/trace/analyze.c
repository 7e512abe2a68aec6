/* Trace analysis: phases, headers, templates, functions and modules across many traces. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpujit/trace.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"

typedef struct row_table {
  gpujit_trace_stat *rows;
  size_t count, cap;
  size_t *slots; /* open addressing: index + 1, 0 empty */
  size_t nslots;
  bool sorted;
} row_table;

struct gpujit_trace_analysis {
  row_table tables[GPUJIT_TRACE_TABLE_COUNT];
  size_t files, events;
};

static const char *const table_names[GPUJIT_TRACE_TABLE_COUNT] = {
    "phases", "headers", "templates", "instantiations", "functions", "modules"};

const char *gpujit_trace_table_name(gpujit_trace_table t)
{
  return (unsigned)t < GPUJIT_TRACE_TABLE_COUNT ? table_names[t] : "unknown";
}

static uint64_t hash_str(const char *s)
{
  uint64_t h = 1469598103934665603ULL;
  while (*s)
    h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
  return h;
}

static int table_grow(row_table *t)
{
  size_t n = 64, *slots;
  while (n < (t->count + 1) * 2)
    n *= 2;
  slots = calloc(n, sizeof(*slots));
  if (!slots)
    return GPUJIT_ENOMEM;
  for (size_t i = 0; i < t->count; i++) {
    size_t s = hash_str(t->rows[i].name) & (n - 1);
    while (slots[s])
      s = (s + 1) & (n - 1);
    slots[s] = i + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->nslots = n;
  return 0;
}

static int table_add(row_table *t, const char *name, double dur)
{
  size_t s;
  if ((t->count + 1) * 2 > t->nslots && table_grow(t) < 0)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  s = hash_str(name) & (t->nslots - 1);
  while (t->slots[s]) {
    gpujit_trace_stat *r = &t->rows[t->slots[s] - 1];
    if (strcmp(r->name, name) == 0) {
      r->total_us += dur;
      if (dur > r->max_us)
        r->max_us = dur;
      r->count++;
      return 0;
    }
    s = (s + 1) & (t->nslots - 1);
  }
  {
    gpujit_trace_stat *rows = gpujit__grow(t->rows, &t->cap, t->count, sizeof(*rows), 32);
    if (!rows)
      return GPUJIT_ENOMEM;
    t->rows = rows;
  }
  if (!(t->rows[t->count].name = gpujit__strdup(name)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  t->rows[t->count].total_us = dur;
  t->rows[t->count].max_us = dur;
  t->rows[t->count].count = 1;
  t->slots[s] = ++t->count;
  t->sorted = false;
  return 0;
}

int gpujit_trace_analysis_create(gpujit_trace_analysis **out)
{
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "NULL out");
  if (!(*out = calloc(1, sizeof(**out))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  return 0;
}

void gpujit_trace_analysis_free(gpujit_trace_analysis *a)
{
  if (!a)
    return;
  for (int k = 0; k < GPUJIT_TRACE_TABLE_COUNT; k++) {
    for (size_t i = 0; i < a->tables[k].count; i++)
      free((char *)a->tables[k].rows[i].name);
    free(a->tables[k].rows);
    free(a->tables[k].slots);
  }
  free(a);
}

/* A parsed complete event. */
typedef struct xev {
  const char *name, *cat, *detail;
  double ts, dur;
  double pid, tid;
  int parent; /* index of the enclosing event on the same track, -1 for none */
} xev;

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

/* "scale [scale<float>(float *, float, int)]" → group "scale", instance "scale<float>(…)". */
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
  if (strcmp(n, "CUDA C++ Front-End") == 0)
    return "front end";
  /* Inside a LibNVVM event the optimizer is counted from LibNVVM itself (see add_events). */
  if ((strcmp(n, "NVVM Module Linker") == 0 || strcmp(n, "NVVM Optimizer") == 0) &&
      (e->parent < 0 || strcmp(all[e->parent].name, "LibNVVM") != 0))
    return "NVVM optimizer";
  if (strcmp(n, "NVVM Module Linker") == 0 || strcmp(n, "NVVM Optimizer") == 0)
    return NULL;
  if (strcmp(n, "NVVM CodeGen") == 0)
    return "codegen";
  if (strcmp(n, "Total PTXAS Time") == 0)
    return "ptxas";
  if (strcmp(n, "link (nvJitLink)") == 0)
    return "link";
  return NULL;
}

static int add_events(gpujit_trace_analysis *a, const char *file, xev *ev, size_t n)
{
  int err = 0, stack[512];
  size_t depth = 0, ptxas_unit = 0;
  double gpujit_own = 0;
  char buf[1024];

  if (n)
    qsort(ev, n, sizeof(*ev), cmp_xev);
  for (size_t i = 0; i < n; i++) {
    while (depth && (ev[stack[depth - 1]].pid != ev[i].pid || ev[stack[depth - 1]].tid != ev[i].tid ||
                     ev[stack[depth - 1]].ts + ev[stack[depth - 1]].dur <= ev[i].ts))
      depth--;
    ev[i].parent = depth ? stack[depth - 1] : -1;
    if (depth < sizeof(stack) / sizeof(stack[0]))
      stack[depth++] = (int)i;
  }
  /* The NVVM optimizer is LibNVVM less its codegen: NVRTC does not always write LibNVVM's
   * sub-phases, nor do they cover all of it. Traces without LibNVVM use the sub-phases. */
  for (size_t i = 0; i < n && err == 0; i++) {
    double codegen = 0;
    if (strcmp(ev[i].name, "LibNVVM") != 0)
      continue;
    for (size_t k = i + 1; k < n && ev[k].ts < ev[i].ts + ev[i].dur; k++)
      if (ev[k].parent == (int)i && !strcmp(ev[k].name, "NVVM CodeGen"))
        codegen += ev[k].dur;
    err = table_add(&a->tables[GPUJIT_TRACE_PHASES], "NVVM optimizer", ev[i].dur - codegen);
  }
  /* gpujit's own time: each build span minus the NVRTC compiles and links directly under it. */
  for (size_t i = 0; i < n && err == 0; i++) {
    const xev *e = &ev[i];
    const char *phase = phase_of(e, ev);
    if (phase)
      err = table_add(&a->tables[GPUJIT_TRACE_PHASES], phase, e->dur);
    if (err)
      break;
    if (strcmp(e->name, "Processing Header File") == 0 && e->detail) {
      err = table_add(&a->tables[GPUJIT_TRACE_HEADERS], e->detail, e->dur);
    } else if (strncmp(e->name, "Instantiating Template", 22) == 0 && e->detail) {
      const char *inst;
      template_names(e->detail, buf, sizeof(buf), &inst);
      if ((err = table_add(&a->tables[GPUJIT_TRACE_TEMPLATES], buf, e->dur)) == 0) {
        /* The instance sits in brackets: "name [instance]". */
        size_t len = strlen(inst);
        if (inst != e->detail && len && inst[len - 1] == ']')
          len--;
        snprintf(buf, sizeof(buf), "%.*s", (int)len, inst);
        err = table_add(&a->tables[GPUJIT_TRACE_INSTANTIATIONS], buf, e->dur);
      }
    } else if (strcmp(e->name, "Generating Function IR") == 0 && e->detail) {
      snprintf(buf, sizeof(buf), "IR generation: %s", e->detail);
      err = table_add(&a->tables[GPUJIT_TRACE_FUNCTIONS], buf, e->dur);
    } else if (strcmp(e->name, "OptFunction") == 0 && e->detail) {
      snprintf(buf, sizeof(buf), "optimization: %s", e->detail);
      err = table_add(&a->tables[GPUJIT_TRACE_FUNCTIONS], buf, e->dur);
    } else if (strcmp(e->name, "Optimizing compilation unit") == 0) {
      /* ptxas names no function here; units follow ptxas's entry order within the module. */
      snprintf(buf, sizeof(buf), "ptxas: %s", e->detail ? e->detail : "");
      if (!e->detail)
        snprintf(buf, sizeof(buf), "ptxas: compilation unit %zu", ++ptxas_unit);
      err = table_add(&a->tables[GPUJIT_TRACE_FUNCTIONS], buf, e->dur);
    } else if (strncmp(e->name, "build ", 6) == 0 && e->cat && strcmp(e->cat, "gpujit") == 0) {
      double inner = 0;
      /* Compile and link spans on the same track inside this build are NVRTC's and nvJitLink's. */
      for (size_t k = i + 1; k < n && ev[k].ts < e->ts + e->dur; k++)
        if (ev[k].pid == e->pid && ev[k].tid == e->tid && ev[k].cat && strcmp(ev[k].cat, "gpujit") == 0 &&
            (strncmp(ev[k].name, "compile ", 8) == 0 || strcmp(ev[k].name, "link (nvJitLink)") == 0))
          inner += ev[k].dur;
      gpujit_own += e->dur - inner > 0 ? e->dur - inner : 0;
      err = table_add(&a->tables[GPUJIT_TRACE_MODULES], e->name + 6, e->dur);
    } else if (e->parent < 0 && (strcmp(e->name, "CUDA C++ Front-End") == 0) && e->detail) {
      /* A raw NVRTC/nvcc trace: the module is the file the front end compiled. */
      bool in_gpujit = false;
      for (size_t k = 0; k < n && !in_gpujit; k++)
        in_gpujit = strncmp(ev[k].name, "build ", 6) == 0;
      if (!in_gpujit) {
        double total = 0;
        for (size_t k = 0; k < n; k++)
          if (ev[k].parent < 0)
            total += ev[k].dur;
        err = table_add(&a->tables[GPUJIT_TRACE_MODULES], e->detail, total);
      }
    }
  }
  if (err == 0 && gpujit_own > 0)
    err = table_add(&a->tables[GPUJIT_TRACE_PHASES], "gpujit overhead", gpujit_own);
  (void)file;
  return err;
}

int gpujit_trace_analysis_add_json(gpujit_trace_analysis *a, const char *name, const char *json, size_t len)
{
  cJSON *root, *events, *e;
  xev *ev = NULL;
  size_t n = 0, idx = 0;
  int err = 0;

  if (!a || !json)
    return gpujit__error(GPUJIT_EINVAL, "trace analysis: NULL argument");
  if (!name)
    name = "(memory)";
  root = cJSON_ParseWithLength(json, len);
  if (!root) {
    const char *where = cJSON_GetErrorPtr();
    long off = where && where >= json && where <= json + len ? (long)(where - json) : -1;
    return gpujit__error(GPUJIT_EPARSE, "%s: not valid JSON (error near byte %ld)", name, off);
  }
  if (cJSON_IsArray(root)) {
    events = root;
  } else if (cJSON_IsObject(root)) {
    events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    if (!events) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: not a trace: no \"traceEvents\" array", name);
      goto done;
    }
    if (!cJSON_IsArray(events)) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: \"traceEvents\" is not an array", name);
      goto done;
    }
  } else {
    err = gpujit__error(GPUJIT_EPARSE, "%s: not a trace: expected a JSON object or array", name);
    goto done;
  }
  if (cJSON_GetArraySize(events) > 0 && !(ev = calloc((size_t)cJSON_GetArraySize(events), sizeof(*ev)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  cJSON_ArrayForEach(e, events) {
    cJSON *ph, *nm, *ts, *dur, *args, *detail, *pid, *tid, *cat;
    idx++;
    if (!cJSON_IsObject(e)) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: event %zu is not an object", name, idx);
      goto done;
    }
    if (!e->child)
      continue; /* NVRTC writes an empty first event */
    ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    if (!cJSON_IsString(ph)) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: event %zu has no \"ph\" string", name, idx);
      goto done;
    }
    if (strcmp(ph->valuestring, "X") != 0)
      continue;
    nm = cJSON_GetObjectItemCaseSensitive(e, "name");
    ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
    dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
    if (!cJSON_IsString(nm) || !cJSON_IsNumber(ts) || !cJSON_IsNumber(dur) || dur->valuedouble < 0) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: complete event %zu needs a string \"name\" and numeric \"ts\" and \"dur\" >= 0",
                          name, idx);
      goto done;
    }
    args = cJSON_GetObjectItemCaseSensitive(e, "args");
    detail = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, "detail") : NULL;
    pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
    tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
    ev[n].name = nm->valuestring;
    ev[n].cat = cJSON_IsString(cat) ? cat->valuestring : NULL;
    ev[n].detail = cJSON_IsString(detail) ? detail->valuestring : NULL;
    ev[n].ts = ts->valuedouble;
    ev[n].dur = dur->valuedouble;
    ev[n].pid = cJSON_IsNumber(pid) ? pid->valuedouble : 0;
    ev[n].tid = cJSON_IsNumber(tid) ? tid->valuedouble : 0;
    n++;
  }
  if ((err = add_events(a, name, ev, n)) == 0) {
    a->files++;
    a->events += n;
  }
done:
  free(ev);
  cJSON_Delete(root);
  return err;
}

int gpujit_trace_analysis_add_file(gpujit_trace_analysis *a, const char *path)
{
  gpujit__buf buf = {0};
  int err;
  if (!a || !path)
    return gpujit__error(GPUJIT_EINVAL, "trace analysis: NULL argument");
  if ((err = gpujit__file_read(&buf, path)) < 0)
    return err;
  if (buf.len == 0)
    err = gpujit__error(GPUJIT_EPARSE, "%s: empty file, not a trace", path);
  else
    err = gpujit_trace_analysis_add_json(a, path, buf.data, buf.len);
  gpujit__buf_free(&buf);
  return err;
}

static int cmp_rows(const void *pa, const void *pb)
{
  const gpujit_trace_stat *a = pa, *b = pb;
  if (a->total_us != b->total_us)
    return a->total_us > b->total_us ? -1 : 1;
  return strcmp(a->name, b->name);
}

size_t gpujit_trace_analysis_count(const gpujit_trace_analysis *a, gpujit_trace_table t)
{
  return a && (unsigned)t < GPUJIT_TRACE_TABLE_COUNT ? a->tables[t].count : 0;
}

const gpujit_trace_stat *gpujit_trace_analysis_row(const gpujit_trace_analysis *ca, gpujit_trace_table t, size_t i)
{
  gpujit_trace_analysis *a = (gpujit_trace_analysis *)ca; /* sorting lazily is not observable */
  row_table *tab;
  if (!a || (unsigned)t >= GPUJIT_TRACE_TABLE_COUNT || i >= a->tables[t].count)
    return NULL;
  tab = &a->tables[t];
  if (!tab->sorted) {
    qsort(tab->rows, tab->count, sizeof(*tab->rows), cmp_rows);
    free(tab->slots); /* indices moved: rebuild the index on the next add */
    tab->slots = NULL;
    tab->nslots = 0;
    table_grow(tab);
    tab->sorted = true;
  }
  return &tab->rows[i];
}

void gpujit_trace_analysis_totals(const gpujit_trace_analysis *a, size_t *files, size_t *events)
{
  if (files)
    *files = a ? a->files : 0;
  if (events)
    *events = a ? a->events : 0;
}
