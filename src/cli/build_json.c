/* The build result, one document for a single build and a project build alike ("format":
 * "gpujit-build", docs/json.md): a record per module under "modules" — the build's row (name,
 * status, output, worker, PCH, error) around the module's own record, which the library makes
 * (gpujit_module_record) — and totals under "summary". */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The module's record (gpujit_module_record(), the library's one builder) into a cJSON object. */
typedef struct json_sink {
  cJSON *open[8]; /* the objects open, innermost last */
  int depth;
} json_sink;

static int to_json(const char *key, gpujit_module_record_kind kind, const gpujit_module_record_value *v, void *payload)
{
  json_sink *s = payload;
  cJSON *top = s->open[s->depth], *arr;
  switch (kind) {
  case GPUJIT_MODULE_RECORD_STRING:
    cJSON_AddStringToObject(top, key, v->string);
    break;
  case GPUJIT_MODULE_RECORD_NUMBER:
    cJSON_AddNumberToObject(top, key, v->number);
    break;
  case GPUJIT_MODULE_RECORD_BOOL:
    cJSON_AddBoolToObject(top, key, v->number != 0);
    break;
  case GPUJIT_MODULE_RECORD_STRINGS:
    arr = cJSON_AddArrayToObject(top, key);
    for (size_t i = 0; i < v->count; i++)
      cJSON_AddItemToArray(arr, cJSON_CreateString(v->strings[i]));
    break;
  case GPUJIT_MODULE_RECORD_OBJECT:
    if (s->depth + 1 >= (int)(sizeof(s->open) / sizeof(s->open[0])))
      return GPUJIT_EINVAL;
    s->open[++s->depth] = cJSON_AddObjectToObject(top, key);
    break;
  case GPUJIT_MODULE_RECORD_END:
    s->depth -= s->depth > 0;
    break;
  }
  return 0;
}

cJSON *cli_build_record(const cli_build_row *r)
{
  cJSON *j = cJSON_CreateObject(), *t;
  if (!j)
    return NULL;
  cJSON_AddStringToObject(j, "name", r->name);
  cJSON_AddStringToObject(j, "status", r->status);
  cJSON_AddBoolToObject(j, "cached", r->cached);
  if (r->output)
    cJSON_AddStringToObject(j, "output", r->output);
  if (r->module) { /* its facts and times, time_ms last */
    json_sink sink = {{j}, 0};
    gpujit_module_record(r->module, to_json, &sink);
    t = cJSON_GetObjectItemCaseSensitive(j, "time_ms");
  } else {
    if (r->miss_reason && *r->miss_reason)
      cJSON_AddStringToObject(j, "miss_reason", r->miss_reason);
    t = cJSON_AddObjectToObject(j, "time_ms");
    cJSON_AddNumberToObject(t, "compile", r->compile_ms);
    cJSON_AddNumberToObject(t, "total", r->total_ms);
  }
  if (r->start_ms >= 0)
    cJSON_AddNumberToObject(t, "start", r->start_ms);
  if (r->worker >= 0)
    cJSON_AddNumberToObject(j, "worker", r->worker);
  cJSON_AddStringToObject(j, "pch", gpujit_pch_status_name(r->pch));
  if (r->pch_reason && *r->pch_reason)
    cJSON_AddStringToObject(j, "pch_reason", r->pch_reason);
  if (r->error) {
    cJSON *e = cJSON_AddObjectToObject(j, "error");
    cJSON_AddStringToObject(e, "code", gpujit_error_name(r->error));
    cJSON_AddStringToObject(e, "message", r->message ? r->message : "");
    cJSON_AddStringToObject(e, "log", r->log ? r->log : "");
  }
  return j;
}

cJSON *cli_build_document(cJSON *records, const cli_build_summary *s)
{
  cJSON *root = cJSON_CreateObject(), *j;
  if (!root)
    return NULL;
  cJSON_AddItemToObject(root, "modules", records);
  j = cJSON_AddObjectToObject(root, "summary");
  cJSON_AddNumberToObject(j, "modules", (double)s->modules);
  cJSON_AddNumberToObject(j, "hits", (double)s->hits);
  cJSON_AddNumberToObject(j, "built", (double)s->built);
  cJSON_AddNumberToObject(j, "failed", (double)s->failed);
  cJSON_AddNumberToObject(j, "cancelled", (double)s->cancelled);
  cJSON_AddNumberToObject(j, "workers", s->workers);
  cJSON_AddNumberToObject(j, "served", (double)s->served);
  cJSON_AddNumberToObject(j, "wall_ms", s->wall_ms);
  cJSON_AddNumberToObject(j, "compile_ms", s->compile_ms);
  cJSON_AddNumberToObject(j, "critical_ms", s->critical_ms);
  cJSON_AddNumberToObject(j, "pch_created", (double)s->pch_created);
  cJSON_AddNumberToObject(j, "pch_used", (double)s->pch_used);
  if (s->trace)
    cJSON_AddStringToObject(j, "trace", s->trace);
  return root;
}
