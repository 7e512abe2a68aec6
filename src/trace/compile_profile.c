/* Compile profiles: their stored form, and their replay into the trace of a cache hit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "trace/compile_profile.h"
#include "trace/sink.h"

#define PROFILE_FORMAT "gpujit-compile-profile"
#define PROFILE_VERSION 1

void gpujit__profile_free(gpujit__profile *p)
{
  if (!p)
    return;
  for (int t = 0; t < GPUJIT__PROFILE_TABLES; t++)
    gpujit__rows_free(&p->tables[t]);
  free(p->module);
  free(p->recorded_at);
  free(p->toolkit);
  free(p->key);
  memset(p, 0, sizeof(*p));
}

void gpujit__profile_take_record(gpujit__profile *to, gpujit__profile *from)
{
  /* The hit's own time stays as gpujit's overhead; the rest is the record's. */
  double overhead = to->build_us;
  for (int t = 0; t < GPUJIT__PROFILE_TABLES; t++) {
    gpujit__rows_free(&to->tables[t]);
    to->tables[t] = from->tables[t];
    memset(&from->tables[t], 0, sizeof(from->tables[t]));
  }
  memcpy(to->floor_us, from->floor_us, sizeof(to->floor_us));
  to->build_us = from->build_us;
  to->compile_us = from->compile_us;
  to->overhead_us = overhead;
  to->recorded = true;
  free(to->recorded_at);
  free(to->toolkit);
  free(to->key);
  to->recorded_at = from->recorded_at;
  to->toolkit = from->toolkit;
  to->key = from->key;
  from->recorded_at = from->toolkit = from->key = NULL;
}

static void add_str(cJSON *o, const char *key, const char *value)
{
  if (value)
    cJSON_AddStringToObject(o, key, value);
}

cJSON *gpujit__profile_to_cjson(gpujit__profile *p, size_t top)
{
  cJSON *j = cJSON_CreateObject(), *tables, *omitted;
  if (!j)
    return NULL;
  cJSON_AddStringToObject(j, "format", PROFILE_FORMAT);
  cJSON_AddNumberToObject(j, "version", PROFILE_VERSION);
  add_str(j, "module", p->module);
  add_str(j, "recorded_at", p->recorded_at);
  add_str(j, "toolkit", p->toolkit);
  add_str(j, "key", p->key);
  cJSON_AddNumberToObject(j, "build_us", p->build_us);
  cJSON_AddNumberToObject(j, "compile_us", p->compile_us);
  tables = cJSON_AddObjectToObject(j, "tables");
  omitted = cJSON_AddObjectToObject(j, "omitted");
  for (int t = 0; t < GPUJIT__PROFILE_TABLES; t++) {
    const gpujit__rows *rows = &p->tables[t];
    cJSON *arr = cJSON_AddArrayToObject(tables, gpujit_trace_table_name((gpujit_trace_table)t));
    double left_us = 0, floor_us = p->floor_us[t];
    size_t kept = 0;
    if (gpujit__rows_sort(&p->tables[t]) < 0)
      goto fail;
    for (size_t i = 0; i < rows->count; i++) {
      const gpujit_trace_stat *r = &rows->rows[i];
      cJSON *row;
      /* Phases are few; the long tables keep their largest rows. */
      if (top && t != GPUJIT_TRACE_PHASES && kept >= top) {
        left_us += r->total_us;
        if (r->total_us > floor_us)
          floor_us = r->total_us;
        continue;
      }
      row = cJSON_CreateArray();
      cJSON_AddItemToArray(row, cJSON_CreateString(r->name));
      cJSON_AddItemToArray(row, cJSON_CreateNumber(r->total_us));
      cJSON_AddItemToArray(row, cJSON_CreateNumber(r->max_us));
      cJSON_AddItemToArray(row, cJSON_CreateNumber((double)r->count));
      cJSON_AddItemToArray(arr, row);
      kept++;
    }
    if (kept < rows->count || floor_us > 0) {
      cJSON *o = cJSON_AddObjectToObject(omitted, gpujit_trace_table_name((gpujit_trace_table)t));
      if (kept < rows->count) {
        cJSON_AddNumberToObject(o, "rows", (double)(rows->count - kept));
        cJSON_AddNumberToObject(o, "total_us", left_us);
      }
      if (floor_us > 0)
        cJSON_AddNumberToObject(o, "largest_us", floor_us);
    }
  }
  return j;
fail:
  cJSON_Delete(j);
  return NULL;
}

static char *dup_str(const cJSON *j, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  return cJSON_IsString(v) ? gpujit__strdup(v->valuestring) : NULL;
}

static bool number_ok(const cJSON *v) { return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15; }

int gpujit__profile_from_cjson(gpujit__profile *p, const cJSON *j, const char *what)
{
  const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(j, "format"), *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
  const cJSON *tables = cJSON_GetObjectItemCaseSensitive(j, "tables");
  const cJSON *build = cJSON_GetObjectItemCaseSensitive(j, "build_us"), *comp = cJSON_GetObjectItemCaseSensitive(j, "compile_us");
  int err = 0;

  memset(p, 0, sizeof(*p));
  if (!cJSON_IsObject(j) || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, PROFILE_FORMAT) != 0)
    return gpujit__error(GPUJIT_EPARSE, "%s: not a gpujit compile profile", what);
  if (!cJSON_IsNumber(ver) || ver->valuedouble != PROFILE_VERSION)
    return gpujit__error(GPUJIT_EPARSE, "%s: compile profile version %g is not supported (this gpujit reads %d)", what,
                         cJSON_IsNumber(ver) ? ver->valuedouble : -1.0, PROFILE_VERSION);
  if (!number_ok(build) || !number_ok(comp) || !cJSON_IsObject(tables))
    return gpujit__error(GPUJIT_EPARSE, "%s: compile profile lacks build_us, compile_us or tables", what);
  p->build_us = build->valuedouble;
  p->compile_us = comp->valuedouble;
  for (int t = 0; t < GPUJIT__PROFILE_TABLES && err == 0; t++) {
    const char *tname = gpujit_trace_table_name((gpujit_trace_table)t);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(tables, tname), *row;
    if (!arr)
      continue;
    if (!cJSON_IsArray(arr)) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: compile profile table '%s' is not an array", what, tname);
      break;
    }
    cJSON_ArrayForEach(row, arr) {
      const cJSON *nm = cJSON_GetArrayItem(row, 0), *tot = cJSON_GetArrayItem(row, 1);
      const cJSON *mx = cJSON_GetArrayItem(row, 2), *cnt = cJSON_GetArrayItem(row, 3);
      if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != 4 || !cJSON_IsString(nm) || !number_ok(tot) ||
          !number_ok(mx) || !number_ok(cnt)) {
        err = gpujit__error(GPUJIT_EPARSE, "%s: compile profile table '%s' has a row that is not [name, total_us, max_us, count]",
                            what, tname);
        break;
      }
      if ((err = gpujit__rows_add(&p->tables[t], nm->valuestring, tot->valuedouble, mx->valuedouble,
                                  (uint64_t)cnt->valuedouble)) < 0)
        break;
    }
  }
  for (int t = 0; t < GPUJIT__PROFILE_TABLES; t++) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "omitted"),
                                                      gpujit_trace_table_name((gpujit_trace_table)t));
    const cJSON *largest = cJSON_GetObjectItemCaseSensitive(o, "largest_us");
    p->floor_us[t] = number_ok(largest) ? largest->valuedouble : 0;
  }
  p->module = dup_str(j, "module");
  p->recorded_at = dup_str(j, "recorded_at");
  p->toolkit = dup_str(j, "toolkit");
  p->key = dup_str(j, "key");
  if (err < 0)
    gpujit__profile_free(p);
  return err;
}

/* The phases of a recorded compile, laid end to end under its span in this order. */
static const char *const phase_order[] = {"front end", "NVVM optimizer", "codegen", "ptxas", "link"};

int gpujit__trace_add_recorded(gpujit_trace *t, const char *module, const char *json, size_t len, double at_us)
{
  cJSON *j = cJSON_ParseWithLength(json, len), *args;
  gpujit__profile p;
  char name[600], track[600], what[600];
  int64_t tid;
  uint64_t id;
  double ts = at_us;
  int err;

  snprintf(what, sizeof(what), "the recorded compile profile of '%s'", module);
  if (!j)
    return gpujit__error(GPUJIT_EPARSE, "%s is not valid JSON", what);
  if ((err = gpujit__profile_from_cjson(&p, j, what)) < 0) {
    cJSON_Delete(j);
    return err;
  }
  snprintf(track, sizeof(track), "recorded: %s", module);
  snprintf(name, sizeof(name), GPUJIT__RECORDED_SPAN "%s", module);
  if ((err = gpujit_trace_track(t, &tid, track)) < 0 ||
      (err = gpujit_trace_complete(t, &id, tid, GPUJIT__RECORDED_CAT, name, at_us, p.compile_us)) < 0)
    goto done;
  if (!(args = cJSON_CreateObject())) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  cJSON_AddStringToObject(args, "module", module);
  cJSON_AddStringToObject(args, "note", "measured when the cache entry was built; this build was a cache hit");
  add_str(args, "recorded_at", p.recorded_at);
  add_str(args, "toolkit", p.toolkit);
  add_str(args, "key", p.key);
  cJSON_AddItemToObject(args, "profile", j);
  j = NULL;
  pthread_mutex_lock(&t->lock);
  cJSON_Delete(t->events[id - 1].args);
  t->events[id - 1].args = args;
  pthread_mutex_unlock(&t->lock);
  for (size_t i = 0; i < sizeof(phase_order) / sizeof(phase_order[0]) && err == 0; i++) {
    const gpujit_trace_stat *r = gpujit__rows_find(&p.tables[GPUJIT_TRACE_PHASES], phase_order[i]);
    if (!r || r->total_us <= 0)
      continue;
    if (ts + r->total_us > at_us + p.compile_us) /* phases never leave their span */
      break;
    err = gpujit_trace_complete(t, NULL, tid, GPUJIT__RECORDED_CAT, phase_order[i], ts, r->total_us);
    ts += r->total_us;
  }
done:
  cJSON_Delete(j);
  gpujit__profile_free(&p);
  return err;
}

int gpujit__trace_add_unrecorded(gpujit_trace *t, const char *module, const char *why)
{
  char name[600];
  uint64_t id;
  int err;
  snprintf(name, sizeof(name), "no recorded compile profile: %s", module);
  if ((err = gpujit_trace_complete(t, &id, 0, GPUJIT__RECORDED_CAT, name, gpujit_trace_now_us(), 0)) < 0)
    return err;
  gpujit_trace_span_arg_str(t, id, "module", module);
  return gpujit_trace_span_arg_str(t, id, "why", why);
}
