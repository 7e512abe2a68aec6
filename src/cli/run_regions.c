/* `gpujit run`'s kernel regions: the module's event buffer emptied before the timed launches,
 * read after them, and its table printed, put in the JSON and the trace. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "run.h"

/* The most events a buffer is grown to: 64 Mi (2 GiB), and never past a quarter of free memory. */
#define MAX_EVENTS ((uint64_t)64 << 20)

static unsigned sms_of(run_cmd *c)
{
  gpujit_device_info info;
  return gpujit_device_info_get(c->r.dev, &info) == 0 && info.multiprocessors > 0 ? (unsigned)info.multiprocessors
                                                                                   : 132u;
}

void run_regions_reset(run_cmd *c, double launches_ahead)
{
  uint64_t count = 0, cap = 0, free_bytes = 0, need, most = MAX_EVENTS;
  if (!gpujit_loaded_regions(c->loaded))
    return;
  /* What the first launch and the warm-up recorded says what the launches ahead will: grow the
   * buffer to hold them all where memory allows (what still does not fit is dropped and said). */
  if (gpujit_loaded_regions_count(c->loaded, &count, &cap) == 0 && count) {
    /* and the tails of the chunks the hardware warp slots hold (64 events each, 64 slots a SM) */
    need = (uint64_t)((double)count / (double)(1 + c->o.warmup) * launches_ahead * 1.05) + 1024 +
           (uint64_t)sms_of(c) * 64 * 64;
    if (gpujit_device_free_memory(c->r.dev, &free_bytes) == 0 && free_bytes / 4 / 32 < most)
      most = free_bytes / 4 / 32;
    if (need > most)
      need = most;
    if (need > cap && gpujit_loaded_regions_capacity(c->loaded, need) < 0)
      cli_warn(c->ctx, "regions: %s", gpujit_error_last());
  }
  if (gpujit_loaded_regions_reset(c->loaded) < 0)
    cli_warn(c->ctx, "regions: %s", gpujit_error_last());
}

static cJSON *four(double mean, double median, double p99, double max)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "mean", mean);
  cJSON_AddNumberToObject(o, "median", median);
  cJSON_AddNumberToObject(o, "p99", p99);
  cJSON_AddNumberToObject(o, "max", max);
  return o;
}

static const char *const scopes[] = {"warp", "block", "thread"};

static void regions_json(cJSON *out, const gpujit_region_report *r)
{
  cJSON *o = cJSON_AddObjectToObject(out, "regions"), *arr;
  cJSON_AddStringToObject(o, "scope", scopes[(unsigned)r->scope < 3 ? r->scope : 0]);
  cJSON_AddNumberToObject(o, "launches", r->launches);
  cJSON_AddNumberToObject(o, "kernel_ns", r->kernel_ns);
  cJSON_AddNumberToObject(o, "events", (double)r->events);
  cJSON_AddNumberToObject(o, "dropped", (double)r->dropped);
  cJSON_AddNumberToObject(o, "unmatched", (double)r->unmatched);
  cJSON_AddNumberToObject(o, "min_call_cycles", (double)r->min_call_cycles);
  arr = cJSON_AddArrayToObject(o, "table");
  for (size_t i = 0; i < r->count; i++) {
    const gpujit_region_stat *s = &r->regions[i];
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "name", s->name);
    cJSON_AddNumberToObject(row, "depth", s->depth);
    cJSON_AddNumberToObject(row, "calls", (double)s->calls);
    cJSON_AddItemToObject(row, "cycles", four(s->cycles_mean, s->cycles_median, s->cycles_p99, s->cycles_max));
    cJSON_AddItemToObject(row, "ns", four(s->ns_mean, s->ns_median, s->ns_p99, s->ns_max));
    cJSON_AddNumberToObject(row, "total_ns", s->total_ns);
    if (s->share >= 0)
      cJSON_AddNumberToObject(row, "share", s->share);
    else
      cJSON_AddNullToObject(row, "share");
    cJSON_AddNumberToObject(row, "sm_imbalance", s->sm_imbalance);
    cJSON_AddNumberToObject(row, "unit_imbalance", s->unit_imbalance);
    cJSON_AddNumberToObject(row, "sms", s->sms);
    cJSON_AddNumberToObject(row, "units", s->units);
    cJSON_AddItemToArray(arr, row);
  }
}

int run_regions_collect(run_cmd *c, double kernel_ms, unsigned launches, double start_us)
{
  int err;
  if (!gpujit_loaded_regions(c->loaded))
    return EXIT_OK;
  gpujit_region_report_free(c->regions);
  c->regions = NULL;
  if ((err = gpujit_loaded_regions_read(&c->regions, c->loaded, kernel_ms, launches)) < 0)
    return cli_fail(c->ctx, err);
  regions_json(c->out, c->regions);
  if (c->ma.trace && (err = gpujit_region_report_trace(c->ma.trace, c->regions, start_us, 0)) < 0)
    cli_warn(c->ctx, "regions in the trace: %s", gpujit_error_last());
  if (c->regions->dropped)
    cli_warn(c->ctx, "regions: %llu events dropped (the buffer held %llu): the table is of the launches before",
             (unsigned long long)c->regions->dropped, (unsigned long long)c->regions->events);
  return EXIT_OK;
}

void run_regions_print(const run_cmd *c)
{
  char *text = NULL;
  if (!c->regions || c->ma.json || c->ctx->verbose < 0)
    return;
  if (gpujit_region_report_format(&text, c->regions) == 0)
    printf("%s", text);
  gpujit_free(text);
}
