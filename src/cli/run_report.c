/* `gpujit run`'s report: the compile half, statistics, checksums, and GPU activity in the trace. */
#define _POSIX_C_SOURCE 200809L
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
void compile_report(const gpujit_module *m, cJSON *mj, double load_ms, double first_ms)
{
  gpujit_module_timings t;
  gpujit_cache_status cs = gpujit_module_cache_status(m);
  const char *status = cs == GPUJIT_CACHE_HIT ? "hit" : cs == GPUJIT_CACHE_MISS ? "miss" : "uncached";
  gpujit_module_timings_get(m, &t);
  cJSON_AddStringToObject(mj, "module", gpujit_module_name(m));
  cJSON_AddStringToObject(mj, "arch", gpujit_module_arch(m));
  cJSON_AddStringToObject(mj, "cache", status);
  cJSON_AddNumberToObject(mj, "hash_lookup_ms", t.hash_ms + t.lookup_ms);
  cJSON_AddNumberToObject(mj, "compile_ms", t.compile_ms);
  cJSON_AddNumberToObject(mj, "link_ms", t.link_ms);
  cJSON_AddNumberToObject(mj, "store_ms", t.store_ms);
  cJSON_AddNumberToObject(mj, "saved_ms", t.saved_ms);
  cJSON_AddNumberToObject(mj, "front_end_ms", t.front_end_ms);
  cJSON_AddNumberToObject(mj, "optimizer_ms", t.optimizer_ms);
  cJSON_AddNumberToObject(mj, "codegen_ms", t.codegen_ms);
  cJSON_AddNumberToObject(mj, "ptxas_ms", t.ptxas_ms);
  {
    cJSON *lean = cli_lean_json(m);
    if (lean)
      cJSON_AddItemToObject(mj, "lean", lean);
  }
  if (load_ms >= 0)
    cJSON_AddNumberToObject(mj, "load_ms", load_ms);
  if (first_ms >= 0)
    cJSON_AddNumberToObject(mj, "first_launch_ms", first_ms);
}

void print_compile(const cJSON *mj, const double phases[4])
{
  const char *cache = cJSON_GetObjectItemCaseSensitive(mj, "cache")->valuestring;
  printf("module %s (%s)  cache %s\n", cJSON_GetObjectItemCaseSensitive(mj, "module")->valuestring,
         cJSON_GetObjectItemCaseSensitive(mj, "arch")->valuestring, cache);
  printf("  %-22s %10.3f ms\n", "hash + lookup", cJSON_GetObjectItemCaseSensitive(mj, "hash_lookup_ms")->valuedouble);
  if (strcmp(cache, "hit") != 0) {
    printf("  %-22s %10.3f ms", "compile (NVRTC)", cJSON_GetObjectItemCaseSensitive(mj, "compile_ms")->valuedouble);
    if (phases[0] > 0)
      printf("   front end %.1f, NVVM optimizer %.1f, codegen %.1f, ptxas %.1f", phases[0], phases[1], phases[2],
             phases[3]);
    printf("\n  %-22s %10.3f ms\n", "link (nvJitLink)", cJSON_GetObjectItemCaseSensitive(mj, "link_ms")->valuedouble);
  } else {
    printf("  %-22s %10.3f ms (the compile this hit saved", "compile saved",
           cJSON_GetObjectItemCaseSensitive(mj, "saved_ms")->valuedouble);
    if (phases[0] > 0)
      printf(": front end %.1f, NVVM optimizer %.1f, codegen %.1f, ptxas %.1f", phases[0], phases[1], phases[2],
             phases[3]);
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
  if (cJSON_GetObjectItemCaseSensitive(mj, "load_ms"))
    printf("  %-22s %10.3f ms\n", "load (cuModuleLoadData)", cJSON_GetObjectItemCaseSensitive(mj, "load_ms")->valuedouble);
  if (cJSON_GetObjectItemCaseSensitive(mj, "first_launch_ms"))
    printf("  %-22s %10.3f ms\n", "first launch", cJSON_GetObjectItemCaseSensitive(mj, "first_launch_ms")->valuedouble);
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

