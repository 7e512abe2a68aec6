/* The build result, one document for a single build and a project build alike ("format":
 * "gpujit-build", docs/json.md): a record per module under "modules", totals under "summary". */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void add_module_facts(cJSON *j, const gpujit_module *m)
{
  cJSON *arr, *names;
  size_t size;
  gpujit_module_image(m, &size);
  cJSON_AddStringToObject(j, "arch", gpujit_module_arch(m));
  cJSON_AddStringToObject(j, "kind", gpujit_output_kind_name(gpujit_module_output(m)));
  cJSON_AddNumberToObject(j, "size", (double)size);
  arr = cJSON_AddArrayToObject(j, "kernels");
  for (size_t i = 0; i < gpujit_module_kernel_count(m); i++)
    cJSON_AddItemToArray(arr, cJSON_CreateString(gpujit_module_kernel(m, i)));
  names = cJSON_AddObjectToObject(j, "lowered_names");
  for (size_t i = 0; i < gpujit_module_name_expression_count(m); i++) {
    const char *lowered;
    const char *expr = gpujit_module_name_expression(m, i, &lowered);
    cJSON_AddStringToObject(names, expr, lowered ? lowered : "");
  }
  if (gpujit_module_cache_key(m))
    cJSON_AddStringToObject(j, "key", gpujit_module_cache_key(m));
  if (*gpujit_module_cache_miss_reason(m))
    cJSON_AddStringToObject(j, "miss_reason", gpujit_module_cache_miss_reason(m));
  if ((arr = cli_lean_json(m)))
    cJSON_AddItemToObject(j, "lean", arr);
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
  if (r->module)
    add_module_facts(j, r->module);
  else if (r->miss_reason && *r->miss_reason)
    cJSON_AddStringToObject(j, "miss_reason", r->miss_reason);
  t = cJSON_AddObjectToObject(j, "time_ms");
  if (r->module) {
    gpujit_module_timings tm;
    gpujit_module_timings_get(r->module, &tm);
    cJSON_AddNumberToObject(t, "read", tm.read_ms);
    cJSON_AddNumberToObject(t, "hash", tm.hash_ms);
    cJSON_AddNumberToObject(t, "lookup", tm.lookup_ms);
    cJSON_AddNumberToObject(t, "compile", tm.compile_ms);
    cJSON_AddNumberToObject(t, "link", tm.link_ms);
    cJSON_AddNumberToObject(t, "store", tm.store_ms);
    cJSON_AddNumberToObject(t, "total", tm.total_ms);
    cJSON_AddNumberToObject(t, "saved", tm.saved_ms);
  } else {
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
