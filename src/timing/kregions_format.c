/* Kernel regions shown: the region table as text (the trace's slices: trace/kregions.c). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "gpujit/regions.h"

static const char *scope_name(gpujit_region_scope s)
{
  return s == GPUJIT_REGION_SCOPE_BLOCK ? "block" : s == GPUJIT_REGION_SCOPE_THREAD ? "thread" : "warp";
}

static void format_row(gpujit__buf *b, const gpujit_region_stat *st)
{
  char name[160], share[16];
  snprintf(name, sizeof(name), "%*s%s", (int)(2 * (st->depth < 8 ? st->depth : 8)), "", st->name);
  if (st->share >= 0)
    snprintf(share, sizeof(share), "%5.1f%%", st->share * 100);
  else
    snprintf(share, sizeof(share), "%6s", "-");
  gpujit__buf_printf(b, "  %-24s %8llu %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %s %6.2f %8.2f\n", name,
                     (unsigned long long)st->calls, st->cycles_mean, st->cycles_median, st->cycles_p99,
                     st->cycles_max, st->ns_mean, st->ns_median, st->ns_p99, st->ns_max, share, st->sm_imbalance,
                     st->unit_imbalance);
}

int gpujit_region_report_format(char **out, const gpujit_region_report *r)
{
  gpujit__buf b = {0};
  const char *unit;
  char imb[32];
  if (!out || !r)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_region_report_format: NULL argument");
  *out = NULL;
  unit = scope_name(r->scope);
  gpujit__buf_printf(&b, "regions (one %s records; %u launch%s, %llu events)\n", unit, r->launches,
                     r->launches == 1 ? "" : "es", (unsigned long long)r->events);
  snprintf(imb, sizeof(imb), "%s imb", unit);
  gpujit__buf_printf(&b, "  %-24s %8s %9s %9s %9s %9s %9s %9s %9s %9s %6s %6s %8s\n", "region", "calls",
                     "cyc mean", "cyc med", "cyc p99", "cyc max", "ns mean", "ns med", "ns p99", "ns max", "share",
                     "SM imb", imb);
  for (size_t i = 0; i < r->count; i++)
    format_row(&b, &r->regions[i]);
  if (r->count == 0)
    gpujit__buf_printf(&b, "  (no region calls recorded)\n");
  gpujit__buf_printf(&b, "  cycles: clock64 of the SM; share: a %s's time in the region over the kernel's; "
                         "imb: the busiest over the mean\n",
                     unit);
  if (r->min_call_cycles)
    gpujit__buf_printf(&b, "  shortest call %llu cycles: what one begin and end cost at most\n",
                       (unsigned long long)r->min_call_cycles);
  if (r->dropped)
    gpujit__buf_printf(&b, "  dropped %llu events: the buffer was full (their regions are missing from the table)\n",
                       (unsigned long long)r->dropped);
  if (r->unmatched)
    gpujit__buf_printf(&b, "  unmatched %llu events: a begin without its end or the reverse (break or return "
                           "out of a region, or a dropped half)\n",
                       (unsigned long long)r->unmatched);
  if (!b.data)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  *out = b.data;
  return 0;
}
