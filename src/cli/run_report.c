/* `gpujit run`'s report: the compile half, statistics, checksums, and GPU activity in the trace. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

void checksum(const buffer *b, const void *host, double *sum, char hex[17])
{
  uint64_t h = 1469598103934665603ULL;
  const unsigned char *p = host;
  *sum = 0;
  for (size_t i = 0; i < b->bytes; i++)
    h = (h ^ p[i]) * 1099511628211ULL;
  snprintf(hex, 17, "%016llx", (unsigned long long)h);
  for (uint64_t i = 0; i < b->spec->count; i++) {
    switch (b->spec->elem) {
    case GPUJIT_ARG_I32: *sum += ((const int32_t *)host)[i]; break;
    case GPUJIT_ARG_U32: *sum += ((const uint32_t *)host)[i]; break;
    case GPUJIT_ARG_I64: *sum += (double)((const int64_t *)host)[i]; break;
    case GPUJIT_ARG_U64: *sum += (double)((const uint64_t *)host)[i]; break;
    case GPUJIT_ARG_F32: *sum += ((const float *)host)[i]; break;
    default: *sum += ((const double *)host)[i]; break;
    }
  }
}

cJSON *stats_json(const gpujit_stats *s)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "samples", (double)s->n);
  cJSON_AddNumberToObject(o, "min", s->min);
  cJSON_AddNumberToObject(o, "median", s->median);
  cJSON_AddNumberToObject(o, "mean", s->mean);
  cJSON_AddNumberToObject(o, "max", s->max);
  cJSON_AddNumberToObject(o, "stdev", s->stdev);
  cJSON_AddNumberToObject(o, "noise", s->noise);
  return o;
}

/* The compile half of the report: what building the module cost. */
void compile_report(const gpujit_module *m, cJSON *mj, bool cached, double load_ms, double first_ms)
{
  gpujit_module_timings t;
  cli_build_row row = {0};
  cJSON *rec, *tj;
  gpujit_module_timings_get(m, &t);
  /* the module's record of a build (docs/json.md), its times with what running added */
  row.name = gpujit_module_name(m);
  row.status = gpujit_module_cache_status(m) == GPUJIT_CACHE_HIT ? "hit" : "built";
  row.cached = cached;
  row.module = m;
  row.start_ms = -1, row.worker = -1;
  row.pch = gpujit_module_pch(m, &row.pch_reason);
  if (!(rec = cli_build_record(&row)))
    return;
  while (rec->child) {
    cJSON *c = cJSON_DetachItemViaPointer(rec, rec->child);
    cJSON_AddItemToObject(mj, c->string, c);
  }
  cJSON_Delete(rec);
  tj = cJSON_GetObjectItemCaseSensitive(mj, "time_ms");
  cJSON_AddNumberToObject(tj, "front_end", t.front_end_ms);
  cJSON_AddNumberToObject(tj, "optimizer", t.optimizer_ms);
  cJSON_AddNumberToObject(tj, "codegen", t.codegen_ms);
  cJSON_AddNumberToObject(tj, "ptxas", t.ptxas_ms);
  if (load_ms >= 0)
    cJSON_AddNumberToObject(tj, "load", load_ms);
  if (first_ms >= 0)
    cJSON_AddNumberToObject(tj, "first_launch", first_ms);
}

static double ms_of(const cJSON *mj, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mj, "time_ms"), key);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* NVRTC's phases of a compile of `total` ms, and "other" for the rest of it (the program's
 * creation and destruction, gpujit's lean pass, its own work), so that the parts add up to the
 * compile shown: each part is rounded as shown, and "other" takes what the rounding leaves. */
static void print_phases(const char *lead, double total, const double phases[4])
{
  double shown = 0, part[4];
  if (!(phases[0] > 0))
    return;
  for (int i = 0; i < 4; i++)
    part[i] = round(phases[i] * 10) / 10, shown += part[i];
  printf("%sfront end %.1f, NVVM optimizer %.1f, codegen %.1f, ptxas %.1f, other %.1f", lead, part[0], part[1],
         part[2], part[3], round(total * 10) / 10 - shown);
}

void print_compile(const cJSON *mj, const double phases[4])
{
  const char *status = cJSON_GetObjectItemCaseSensitive(mj, "status")->valuestring;
  bool hit = !strcmp(status, "hit"), cached = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(mj, "cached"));
  printf("module %s (%s)  cache %s\n", cJSON_GetObjectItemCaseSensitive(mj, "name")->valuestring,
         cJSON_GetObjectItemCaseSensitive(mj, "arch")->valuestring, hit ? "hit" : cached ? "miss" : "uncached");
  printf("  %-22s %10.3f ms\n", "hash + lookup", ms_of(mj, "hash") + ms_of(mj, "lookup"));
  if (!hit) {
    printf("  %-22s %10.3f ms", "compile (NVRTC)", ms_of(mj, "compile"));
    print_phases("   ", ms_of(mj, "compile"), phases);
    printf("\n  %-22s %10.3f ms\n", "link (nvJitLink)", ms_of(mj, "link"));
  } else {
    printf("  %-22s %10.3f ms (the compile this hit saved", "compile saved", ms_of(mj, "saved"));
    print_phases(": ", ms_of(mj, "saved"), phases);
    printf(")\n");
  }
  {
    const cJSON *lean = cJSON_GetObjectItemCaseSensitive(mj, "lean");
    if (cJSON_IsObject(lean)) {
      char a[32], b[32];
      printf("  %-22s PTX %s -> %s, %.0f of %.0f module-scope variables removed\n", "lean",
             cli_size(a, sizeof(a), cJSON_GetObjectItemCaseSensitive(lean, "ptx_bytes_before")->valuedouble),
             cli_size(b, sizeof(b), cJSON_GetObjectItemCaseSensitive(lean, "ptx_bytes_after")->valuedouble),
             cJSON_GetObjectItemCaseSensitive(lean, "removed")->valuedouble,
             cJSON_GetObjectItemCaseSensitive(lean, "variables")->valuedouble);
    }
  }
  if (ms_of(mj, "load") >= 0)
    printf("  %-22s %10.3f ms\n", "load (cuModuleLoadData)", ms_of(mj, "load"));
  if (ms_of(mj, "first_launch") >= 0)
    printf("  %-22s %10.3f ms\n", "first launch", ms_of(mj, "first_launch"));
}

/* NVRTC's phase times (ms), as the build recorded them. */
void phase_times(const gpujit_module *m, double out[4])
{
  gpujit_module_timings t;
  gpujit_module_timings_get(m, &t);
  out[0] = t.front_end_ms;
  out[1] = t.optimizer_ms;
  out[2] = t.codegen_ms;
  out[3] = t.ptxas_ms;
}

void trace_results(gpujit_trace *trace, const gpujit_timing_result *res, size_t n, int device)
{
  int64_t tid = 0;
  char name[64];
  if (!trace || !n)
    return;
  snprintf(name, sizeof(name), "GPU %d stream", device);
  if (gpujit_trace_track(trace, &tid, name) < 0)
    return;
  for (size_t i = 0; i < n; i++) {
    uint64_t id = 0;
    if (gpujit_trace_complete(trace, &id, tid, "gpu", res[i].name, res[i].start_us, res[i].elapsed_ms * 1e3) == 0) {
      gpujit_trace_span_arg_str(trace, id, "kind", gpujit_activity_kind_name(res[i].kind));
      gpujit_trace_span_arg_num(trace, id, "order", (double)res[i].order);
      if (res[i].bytes)
        gpujit_trace_span_arg_num(trace, id, "bytes", (double)res[i].bytes);
    }
  }
}

