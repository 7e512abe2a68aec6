/* Timing reports: the timeline, activity and device summaries as text, and sample statistics. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/demangle.h"
#include "base/error.h"
#include "gpujit/timing.h"

const char *gpujit_activity_kind_name(gpujit_activity_kind k)
{
  static const char *const names[] = {"kernel", "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memset", "graph"};
  return (unsigned)k < 6 ? names[k] : "?";
}

typedef struct agg {
  char name[160];
  double total;
  size_t count;
} agg;

static size_t aggregate(agg *rows, size_t n, const char *name, double ms)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].name, name) == 0) {
      rows[i].total += ms;
      rows[i].count++;
      return n;
    }
  snprintf(rows[n].name, sizeof(rows[n].name), "%s", name);
  rows[n].total = ms;
  rows[n].count = 1;
  return n + 1;
}

int gpujit_timing_format(char **out, const gpujit_timing_result *r, size_t n, unsigned sections)
{
  gpujit__buf b = {0};
  agg *rows = NULL;
  size_t k;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_timing_format: NULL out");
  *out = NULL;
  if (n && !(rows = calloc(n, sizeof(*rows))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (sections & GPUJIT_REPORT_TIMELINE) {
    gpujit__buf_printf(&b, "timeline\n  %6s %-12s %12s  %s\n", "order", "kind", "ms", "name");
    for (size_t i = 0; i < n; i++) {
      char name[512];
      gpujit__kernel_name(r[i].name, name, sizeof(name)); /* as Nsight shows it; results keep the symbol */
      if (r[i].missing) /* CUPTI gave no time for it */
        gpujit__buf_printf(&b, "  %6llu %-12s %12s  %s\n", (unsigned long long)r[i].order,
                           gpujit_activity_kind_name(r[i].kind), "no record", name);
      else
        gpujit__buf_printf(&b, "  %6llu %-12s %12.6f  %s\n", (unsigned long long)r[i].order,
                           gpujit_activity_kind_name(r[i].kind), r[i].elapsed_ms, name);
    }
  }
  if (sections & GPUJIT_REPORT_ACTIVITY) {
    k = 0;
    for (size_t i = 0; i < n; i++)
      if (!r[i].missing)
        k = aggregate(rows, k, r[i].name, r[i].elapsed_ms);
    gpujit__buf_printf(&b, "activity summary\n  %12s %8s %12s  %s\n", "total ms", "count", "mean ms", "name");
    for (size_t i = 0; i < k; i++) {
      char name[512];
      gpujit__kernel_name(rows[i].name, name, sizeof(name));
      gpujit__buf_printf(&b, "  %12.6f %8zu %12.6f  %s\n", rows[i].total, rows[i].count,
                         rows[i].total / (double)rows[i].count, name);
    }
  }
  if (sections & GPUJIT_REPORT_DEVICE) {
    k = 0;
    for (size_t i = 0; i < n; i++) {
      char dev[32];
      if (r[i].missing || r[i].graph_node)
        continue; /* a graph's nodes are inside its own time */
      snprintf(dev, sizeof(dev), "device %d", r[i].device);
      k = aggregate(rows, k, dev, r[i].elapsed_ms);
    }
    gpujit__buf_printf(&b, "device summary\n  %12s %8s  %s\n", "total ms", "count", "device");
    for (size_t i = 0; i < k; i++)
      gpujit__buf_printf(&b, "  %12.6f %8zu  %s\n", rows[i].total, rows[i].count, rows[i].name);
  }
  free(rows);
  if (!b.data && gpujit__buf_puts(&b, "") < 0)
    return GPUJIT_ENOMEM;
  *out = b.data;
  return 0;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int gpujit_stats_compute(gpujit_stats *out, const double *s, size_t n)
{
  double *v, sum = 0, sq = 0;
  if (!out || !s || n == 0)
    return gpujit__error(GPUJIT_EINVAL, "statistics of an empty sample");
  if (!(v = malloc(n * sizeof(*v))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  memcpy(v, s, n * sizeof(*v));
  qsort(v, n, sizeof(*v), cmp_double);
  for (size_t i = 0; i < n; i++)
    sum += v[i];
  out->n = n;
  out->min = v[0];
  out->max = v[n - 1];
  out->mean = sum / (double)n;
  out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  for (size_t i = 0; i < n; i++)
    sq += (v[i] - out->mean) * (v[i] - out->mean);
  out->stdev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
  /* Noise: the median absolute deviation, scaled to a normal stdev (1.4826), over the median.
   * A few outliers (a clock ramp, a preempted sample) do not hold a benchmark hostage. */
  for (size_t i = 0; i < n; i++)
    v[i] = fabs(v[i] - out->median);
  qsort(v, n, sizeof(*v), cmp_double);
  out->noise = out->median > 0 ? 1.4826 * (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) / out->median : 0;
  free(v);
  return 0;
}

