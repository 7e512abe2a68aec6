/* Kernel regions in a profile: the "kregions" records the injection library wrote for the modules
 * it bound (one per region and read: its calls, cycles and ns summarised in the process) merged
 * per module and region into the public rows, the "kslices" (a bounded number of calls) kept for
 * the trace, and the tables as text. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/demangle.h"
#include "base/error.h"
#include "inject/protocol.h"
#include "profile/model.h"
#include "profile/record_fields.h"

static double num_of(const cJSON *j, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  return cJSON_IsNumber(v) && v->valuedouble == v->valuedouble && v->valuedouble >= 0 ? v->valuedouble : 0;
}

/* Four numbers (mean, median, p99, max) of an array field; 0 where absent. */
static void four_of(const cJSON *j, const char *k, double out[4])
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, k), *e;
  int i = 0;
  memset(out, 0, 4 * sizeof(*out));
  if (!cJSON_IsArray(a))
    return;
  cJSON_ArrayForEach(e, a)
  {
    if (i < 4 && cJSON_IsNumber(e) && e->valuedouble == e->valuedouble && e->valuedouble >= 0)
      out[i] = e->valuedouble;
    i++;
  }
}

static void read_region(gpujit_profile *p, const cJSON *j, int pid)
{
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
  pf_kregion *r = PF_PUSH(p->kregions);
  if (!r)
    return;
  r->pid = pid;
  r->handle = pf_u_of(j, "module"), r->handle2 = pf_u_of(j, "module2"), r->read = pf_u_of(j, "read");
  snprintf(r->scope, sizeof(r->scope), "%s", pf_s_of(j, "scope"));
  r->events = pf_u_of(j, "events"), r->dropped = pf_u_of(j, "dropped"), r->unmatched = pf_u_of(j, "unmatched");
  r->launches = pf_u_of(j, "launches"), r->min_cycles = pf_u_of(j, "min_cycles");
  if (cJSON_IsString(name)) {
    r->name = pf_dup(name->valuestring);
    r->depth = (uint32_t)pf_u_of(j, "depth"), r->calls = pf_u_of(j, "calls");
    four_of(j, "cyc", r->cyc), four_of(j, "ns", r->ns);
    r->total_ns = num_of(j, "total_ns"), r->sm_imb = num_of(j, "sm_imb"), r->unit_imb = num_of(j, "unit_imb");
    r->sms = (uint32_t)pf_u_of(j, "sms"), r->units = (uint32_t)pf_u_of(j, "units");
  }
}

static uint64_t nth(const cJSON *a, int i)
{
  const cJSON *e = cJSON_GetArrayItem(a, i);
  return cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble < 1.8e19 ? (uint64_t)e->valuedouble : 0;
}

/* A "kslices" record's calls: starts are offsets from "t0" (globaltimer ns, exact in the text),
 * moved onto the host clock as kernels' times are (the process's clock record). */
static void read_slices(gpujit_profile *p, const pf_proc *proc, const char *line, const cJSON *j, int pid)
{
  static const char *const keys[6] = {"i", "sm", "unit", "s", "d", "c"};
  const cJSON *a[6];
  uint64_t t0 = pf_t_of(line, "t0");
  int n = -1;
  for (int k = 0; k < 6; k++) {
    int len;
    a[k] = cJSON_GetObjectItemCaseSensitive(j, keys[k]);
    len = cJSON_IsArray(a[k]) ? cJSON_GetArraySize(a[k]) : 0;
    n = n < 0 || len < n ? len : n;
  }
  for (int i = 0; i < n; i++) {
    pf_kslice *s = PF_PUSH(p->kslices);
    uint64_t t = t0 + nth(a[3], i);
    if (!s)
      return;
    s->pid = pid, s->handle = pf_u_of(j, "module"), s->read = pf_u_of(j, "read");
    s->region = (uint32_t)nth(a[0], i), s->sm = (uint32_t)nth(a[1], i), s->unit = (uint32_t)nth(a[2], i);
    s->s = pf_host_time(proc, t);
    s->d = nth(a[4], i), s->cycles = nth(a[5], i);
  }
}

void gpujit__profile_read_kregions(gpujit_profile *p, const pf_proc *proc, const char *line, const cJSON *j, int kind,
                                   int pid)
{
  if (kind == GPUJIT_RECORD_KREGIONS)
    read_region(p, j, pid);
  else
    read_slices(p, proc, line, j, pid);
}

/* ---- the rows ------------------------------------------------------------------------------ */

typedef struct acc { /* a row's sums over its reads */
  size_t module;     /* the module's ordinal, in the order first read */
  uint64_t handle2;
  double w[6];       /* calls-weighted sums: cycles mean, median, p99; ns mean, median, p99 */
  double imb[2];     /* calls-weighted sums of the SM and unit imbalance */
} acc;

static bool same_module(const gpujit_profile_region *row, const acc *a, const pf_kregion *r)
{
  return row->pid == r->pid && (row->handle == r->handle || (r->handle2 && row->handle == r->handle2) ||
                                (a->handle2 && (a->handle2 == r->handle || a->handle2 == r->handle2)));
}

static void add_call_figures(gpujit_profile_region *row, acc *a, const pf_kregion *r)
{
  double c = (double)r->calls;
  if (!row->calls || r->depth < row->depth)
    row->depth = r->depth;
  row->calls += r->calls;
  a->w[0] += c * r->cyc[0], a->w[1] += c * r->cyc[1], a->w[2] += c * r->cyc[2];
  a->w[3] += c * r->ns[0], a->w[4] += c * r->ns[1], a->w[5] += c * r->ns[2];
  a->imb[0] += c * r->sm_imb, a->imb[1] += c * r->unit_imb;
  row->cycles_max = r->cyc[3] > row->cycles_max ? r->cyc[3] : row->cycles_max;
  row->ns_max = r->ns[3] > row->ns_max ? r->ns[3] : row->ns_max;
  row->total_ns += r->total_ns;
  row->sms = r->sms > row->sms ? r->sms : row->sms;
  row->units = r->units > row->units ? r->units : row->units;
}

/* The row of record `r` (its module and region), made where there is none. */
static size_t row_of(gpujit_profile *p, acc *accs, size_t *nmodules, const pf_kregion *r)
{
  size_t i, module = *nmodules;
  const char *name = r->name ? r->name : "";
  for (i = 0; i < p->nregion_rows; i++)
    if (same_module(&p->region_rows[i], &accs[i], r)) {
      module = accs[i].module;
      if (!strcmp(p->region_rows[i].region, name))
        return i;
    }
  if (module == *nmodules)
    (*nmodules)++;
  i = p->nregion_rows++;
  memset(&p->region_rows[i], 0, sizeof(p->region_rows[i]));
  memset(&accs[i], 0, sizeof(accs[i]));
  p->region_rows[i].pid = r->pid, p->region_rows[i].handle = r->handle, p->region_rows[i].region = name;
  p->region_rows[i].scope = r->scope; /* as the record says it (the profile keeps the record) */
  accs[i].module = module, accs[i].handle2 = r->handle2;
  return i;
}

/* What a module's reads say of the module: added once per read (its first record). */
static void add_read(gpujit_profile *p, const acc *accs, const pf_kregion *r)
{
  for (size_t i = 0; i < p->nregion_rows; i++) {
    gpujit_profile_region *row = &p->region_rows[i];
    if (!same_module(row, &accs[i], r))
      continue;
    row->events += r->events, row->dropped += r->dropped, row->unmatched += r->unmatched;
    row->launches += r->launches;
    row->reads++;
    if (r->min_cycles && (!row->min_call_cycles || r->min_cycles < row->min_call_cycles))
      row->min_call_cycles = r->min_cycles;
  }
}

static const acc *sort_accs;
static int by_module(const void *x, const void *y)
{
  size_t a = *(const size_t *)x, b = *(const size_t *)y;
  if (sort_accs[a].module != sort_accs[b].module)
    return sort_accs[a].module < sort_accs[b].module ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* Each row's module name and kernels, from the loads and kernel sums of its handles. */
static int name_rows(gpujit_profile *p, const acc *accs)
{
  for (size_t i = 0; i < p->nregion_rows; i++) {
    gpujit_profile_region *row = &p->region_rows[i];
    uint64_t h[2] = {row->handle, accs[i].handle2};
    char name[64], kernels[1024] = "";
    const char *module = NULL;
    size_t used = 0;
    for (size_t k = 0; k < p->loads.n && !module; k++) {
      const pf_load *l = &p->loads.v[k];
      if (l->pid == row->pid && l->result == 0 && l->module >= 0 && l->handle && (l->handle == h[0] || l->handle == h[1]))
        module = p->rows[l->module].name;
    }
    snprintf(name, sizeof(name), "0x%llx", (unsigned long long)row->handle);
    for (size_t k = 0; k < p->ksums.n; k++) {
      const pf_ksum *s = &p->ksums.v[k];
      if (s->pid != row->pid || !s->handle || (s->handle != h[0] && s->handle != h[1]) || !s->name ||
          strstr(kernels, s->name))
        continue;
      used += (size_t)snprintf(kernels + used, sizeof(kernels) - used, "%s%s", used ? ", " : "", s->name);
      if (used >= sizeof(kernels))
        break;
    }
    if (!(p->region_strings[2 * i] = pf_dup(module ? module : name)) || !(p->region_strings[2 * i + 1] = pf_dup(kernels)))
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    row->module = p->region_strings[2 * i], row->kernels = p->region_strings[2 * i + 1];
  }
  return 0;
}

/* The rows in module order, a module's "" row (no call) left out where it has named ones. */
static int order_rows(gpujit_profile *p, acc *accs)
{
  size_t *idx = malloc((p->nregion_rows + 1) * sizeof(*idx)), n = 0;
  gpujit_profile_region *rows = malloc((p->nregion_rows + 1) * sizeof(*rows));
  acc *a2 = malloc((p->nregion_rows + 1) * sizeof(*a2));
  if (!idx || !rows || !a2) {
    free(idx), free(rows), free(a2);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < p->nregion_rows; i++) {
    bool named = false;
    for (size_t k = 0; k < p->nregion_rows && !p->region_rows[i].region[0]; k++)
      named |= accs[k].module == accs[i].module && p->region_rows[k].region[0];
    if (!named)
      idx[n++] = i;
  }
  sort_accs = accs;
  qsort(idx, n, sizeof(*idx), by_module);
  for (size_t i = 0; i < n; i++)
    rows[i] = p->region_rows[idx[i]], a2[i] = accs[idx[i]];
  memcpy(p->region_rows, rows, n * sizeof(*rows));
  memcpy(accs, a2, n * sizeof(*a2));
  p->nregion_rows = n;
  free(idx), free(rows), free(a2);
  return 0;
}

int gpujit__profile_regions(gpujit_profile *p)
{
  size_t n = p->kregions.n, nmodules = 0;
  acc *accs;
  int err;
  if (!n)
    return 0;
  p->region_rows = calloc(n, sizeof(*p->region_rows));
  p->region_strings = calloc(2 * n + 1, sizeof(*p->region_strings));
  accs = calloc(n, sizeof(*accs));
  if (!p->region_rows || !p->region_strings || !accs) {
    free(accs);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < n; k++) {
    const pf_kregion *r = &p->kregions.v[k];
    size_t i = row_of(p, accs, &nmodules, r);
    if (r->name)
      add_call_figures(&p->region_rows[i], &accs[i], r);
  }
  for (size_t k = 0; k < n; k++) { /* once per read: the first of its records */
    const pf_kregion *r = &p->kregions.v[k];
    bool again = false;
    for (size_t m = 0; m < k && !again; m++)
      again = p->kregions.v[m].pid == r->pid && p->kregions.v[m].read == r->read;
    if (!again)
      add_read(p, accs, r);
  }
  for (size_t i = 0; i < p->nregion_rows; i++) {
    gpujit_profile_region *row = &p->region_rows[i];
    double c = row->calls ? (double)row->calls : 1;
    row->cycles_mean = accs[i].w[0] / c, row->cycles_median = accs[i].w[1] / c, row->cycles_p99 = accs[i].w[2] / c;
    row->ns_mean = accs[i].w[3] / c, row->ns_median = accs[i].w[4] / c, row->ns_p99 = accs[i].w[5] / c;
    row->sm_imbalance = accs[i].imb[0] / c, row->unit_imbalance = accs[i].imb[1] / c;
  }
  if ((err = order_rows(p, accs)) == 0)
    err = name_rows(p, accs);
  free(accs);
  return err;
}

void gpujit__profile_regions_free(gpujit_profile *p)
{
  for (size_t i = 0; p->region_strings && i < 2 * p->nregion_rows; i++)
    free(p->region_strings[i]);
  free(p->region_strings), free(p->region_rows);
  for (size_t i = 0; i < p->kregions.n; i++)
    free(p->kregions.v[i].name);
  free(p->kregions.v), free(p->kslices.v);
}

size_t gpujit_profile_regions(const gpujit_profile *p, const gpujit_profile_region **rows)
{
  size_t n = p ? p->nregion_rows : 0;
  if (rows)
    *rows = n ? p->region_rows : NULL;
  return n;
}

/* ---- the text -------------------------------------------------------------------------------- */

static void format_module(const gpujit_profile_region *r, size_t n, gpujit__buf *f)
{
  char kernels[300] = "", imb[16];
  if (r->kernels[0]) {
    char shown[256];
    gpujit__kernel_name(r->kernels, shown, sizeof(shown));
    snprintf(kernels, sizeof(kernels), ", kernels %s", shown);
  }
  gpujit__buf_printf(f, "\n  kernel regions of %s (process %d%s): one %s records; %llu read%s, %llu launch%s, "
                        "%llu events\n",
                     r->module, r->pid, kernels, r->scope, (unsigned long long)r->reads, r->reads == 1 ? "" : "s",
                     (unsigned long long)r->launches, r->launches == 1 ? "" : "es", (unsigned long long)r->events);
  snprintf(imb, sizeof(imb), "%s imb", r->scope);
  gpujit__buf_printf(f, "    %-24s %8s %9s %9s %9s %9s %9s %9s %9s %9s %6s %9s\n", "region", "calls", "cyc mean",
                     "cyc med", "cyc p99", "cyc max", "ns mean", "ns med", "ns p99", "ns max", "SM imb", imb);
  for (size_t i = 0; i < n; i++) {
    char name[160];
    if (!r[i].region[0]) {
      gpujit__buf_printf(f, "    (no region calls recorded)\n");
      continue;
    }
    snprintf(name, sizeof(name), "%*s%s", (int)(2 * (r[i].depth < 8 ? r[i].depth : 8)), "", r[i].region);
    gpujit__buf_printf(f, "    %-24s %8llu %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %6.2f %9.2f\n", name,
                       (unsigned long long)r[i].calls, r[i].cycles_mean, r[i].cycles_median, r[i].cycles_p99,
                       r[i].cycles_max, r[i].ns_mean, r[i].ns_median, r[i].ns_p99, r[i].ns_max, r[i].sm_imbalance,
                       r[i].unit_imbalance);
  }
  if (r->min_call_cycles)
    gpujit__buf_printf(f, "    shortest call %llu cycles: what one begin and end cost at most\n",
                       (unsigned long long)r->min_call_cycles);
  if (r->dropped)
    gpujit__buf_printf(f, "    dropped %llu events: the buffer was full (GPUJIT_PROFILE_REGIONS sizes it; a "
                          "--schedule reads it at each active step's end)\n",
                       (unsigned long long)r->dropped);
  if (r->unmatched)
    gpujit__buf_printf(f, "    unmatched %llu events: a begin without its end or the reverse\n",
                       (unsigned long long)r->unmatched);
}

void gpujit__profile_format_regions(const gpujit_profile *p, gpujit__buf *f)
{
  const gpujit_profile_region *r;
  size_t n = gpujit_profile_regions(p, &r);
  for (size_t a = 0, b; a < n; a = b) {
    for (b = a + 1; b < n && r[b].pid == r[a].pid && r[b].handle == r[a].handle; b++)
      ;
    format_module(r + a, b - a, f);
  }
}
