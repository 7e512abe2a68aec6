/* A profile's tables described once: each field's JSON key, type and place in its public struct
 * (gpujit_profile_fields). The JSON writer (json.c) and the Python extension read the structs
 * through these tables, so a field added here appears in both with one name. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "profile/model.h"

static double ms(uint64_t a, uint64_t b) { return b > a ? (double)(b - a) / 1e6 : 0; }

#define F(S, key, type, member) {key, GPUJIT_FIELD_##type, offsetof(S, member), 0}
#define OPT(S, key, type, member) {key, GPUJIT_FIELD_##type, offsetof(S, member), 1}

static const gpujit_profile_field totals[] = {
    F(gpujit_profile_totals, "exit_status", INT, exit_status),
    F(gpujit_profile_totals, "signal", INT, signal),
    F(gpujit_profile_totals, "wall_ms", F64, wall_ms),
    F(gpujit_profile_totals, "processes", U64, processes),
    F(gpujit_profile_totals, "processes_partial", U64, processes_partial),
    F(gpujit_profile_totals, "partial", BOOL, partial),
    F(gpujit_profile_totals, "compiles", U64, compiles),
    F(gpujit_profile_totals, "failed", U64, failed),
    F(gpujit_profile_totals, "repeats", U64, repeats),
    F(gpujit_profile_totals, "compile_ms", F64, compile_ms),
    F(gpujit_profile_totals, "repeat_ms", F64, repeat_ms),
    F(gpujit_profile_totals, "link_ms", F64, link_ms),
    F(gpujit_profile_totals, "loads", U64, loads),
    F(gpujit_profile_totals, "load_ms", F64, load_ms),
    F(gpujit_profile_totals, "jit_ms", F64, jit_ms),
    F(gpujit_profile_totals, "launches", U64, launches),
    F(gpujit_profile_totals, "gpu_ms", F64, gpu_ms),
    F(gpujit_profile_totals, "untraced", U64, untraced),
    F(gpujit_profile_totals, "lost", U64, lost),
    F(gpujit_profile_totals, "gpu_recorded", BOOL, gpu_recorded),
    F(gpujit_profile_totals, "untied", U64, untied),
    F(gpujit_profile_totals, "autotune_launches", U64, autotune_launches),
    F(gpujit_profile_totals, "autotune_ms", F64, autotune_ms),
};

static const gpujit_profile_field options[] = {
    F(gpujit_profile_options, "lineinfo", BOOL, lineinfo),
    F(gpujit_profile_options, "nvrtc_trace", BOOL, nvrtc_trace),
};

static const gpujit_profile_field devices[] = {
    F(gpujit_profile_device, "device", U32, device),
    F(gpujit_profile_device, "launches", U64, launches),
    F(gpujit_profile_device, "kernel_ms", F64, kernel_ms),
    F(gpujit_profile_device, "copies", U64, copies),
    F(gpujit_profile_device, "copy_bytes", U64, copy_bytes),
    F(gpujit_profile_device, "copy_ms", F64, copy_ms),
    F(gpujit_profile_device, "memsets", U64, memsets),
    F(gpujit_profile_device, "memset_ms", F64, memset_ms),
};

static const gpujit_profile_field modules[] = {
    F(gpujit_profile_module, "name", STR, name),
    F(gpujit_profile_module, "kernel", STR, kernel),
    F(gpujit_profile_module, "origin", STR, origin),
    F(gpujit_profile_module, "image", STR, image),
    F(gpujit_profile_module, "image_bytes", U64, image_bytes),
    F(gpujit_profile_module, "pid", INT, pid),
    F(gpujit_profile_module, "loads", U64, loads),
    F(gpujit_profile_module, "compiles", U64, compiles),
    F(gpujit_profile_module, "repeats", U64, repeats),
    F(gpujit_profile_module, "compile_ms", F64, compile_ms),
    F(gpujit_profile_module, "repeat_ms", F64, repeat_ms),
    F(gpujit_profile_module, "load_ms", F64, load_ms),
    F(gpujit_profile_module, "jit_ms", F64, jit_ms),
    F(gpujit_profile_module, "jit_cache_hits", U64, jit_cache_hits),
    F(gpujit_profile_module, "kernels", U64, kernels),
    F(gpujit_profile_module, "launches", U64, launches),
    F(gpujit_profile_module, "gpu_ms", F64, gpu_ms),
    F(gpujit_profile_module, "break_even_launches", F64, break_even),
    F(gpujit_profile_module, "cache_hits", U64, cache_hits),
    F(gpujit_profile_module, "autotune_launches", U64, autotune_launches),
    F(gpujit_profile_module, "autotune_ms", F64, autotune_ms),
};

static const gpujit_profile_field compiles[] = {
    F(gpujit_profile_compile, "id", INT, id),
    F(gpujit_profile_compile, "kind", STR, kind),
    F(gpujit_profile_compile, "name", STR, name),
    F(gpujit_profile_compile, "pid", INT, pid),
    F(gpujit_profile_compile, "tid", U32, tid),
    F(gpujit_profile_compile, "options", STR, options),
    F(gpujit_profile_compile, "headers", INT, headers),
    F(gpujit_profile_compile, "ms", F64, ms),
    F(gpujit_profile_compile, "result", INT, result),
    OPT(gpujit_profile_compile, "log", STR, log),
    F(gpujit_profile_compile, "repeat", BOOL, repeat),
    OPT(gpujit_profile_compile, "ptx_bytes", U64, ptx_bytes),
    OPT(gpujit_profile_compile, "cubin_bytes", U64, cubin_bytes),
    OPT(gpujit_profile_compile, "ltoir_bytes", U64, ltoir_bytes),
    F(gpujit_profile_compile, "library", STR, library),
    F(gpujit_profile_compile, "module", STR, module),
    F(gpujit_profile_compile, "within", INT, within),
    F(gpujit_profile_compile, "stage_of", INT, stage_of),
    OPT(gpujit_profile_compile, "cache", STR, cache),
    F(gpujit_profile_compile, "cpu_ms", F64, cpu_ms),
    F(gpujit_profile_compile, "start_ms", F64, start_ms),
};

static const gpujit_profile_field compilers[] = {
    F(gpujit_profile_compiler, "compiler", STR, compiler),
    F(gpujit_profile_compiler, "compiles", U64, compiles),
    F(gpujit_profile_compiler, "ms", F64, ms),
    F(gpujit_profile_compiler, "within", U64, within),
    F(gpujit_profile_compiler, "within_ms", F64, within_ms),
    F(gpujit_profile_compiler, "cache_hits", U64, cache_hits),
    F(gpujit_profile_compiler, "failed", U64, failed),
    F(gpujit_profile_compiler, "cpu_ms", F64, cpu_ms),
};

static const gpujit_profile_field stages[] = {
    F(gpujit_profile_stage, "compile", INT, compile),
    F(gpujit_profile_stage, "name", STR, name),
    F(gpujit_profile_stage, "start_ms", F64, start_ms),
    F(gpujit_profile_stage, "ms", F64, ms),
};

static const gpujit_profile_field processes[] = {
    F(gpujit_profile_process, "pid", INT, pid),
    F(gpujit_profile_process, "ppid", INT, ppid),
    F(gpujit_profile_process, "command", STR, command),
    F(gpujit_profile_process, "ended", BOOL, ended),
    F(gpujit_profile_process, "gpu_recorded", BOOL, gpu_recorded),
};

static const gpujit_profile_field steps[] = {
    F(gpujit_profile_step_row, "id", INT, id),
    F(gpujit_profile_step_row, "pid", INT, pid),
    F(gpujit_profile_step_row, "step", U64, step),
    F(gpujit_profile_step_row, "cycle", INT, cycle),
    F(gpujit_profile_step_row, "src", STR, src),
    F(gpujit_profile_step_row, "schedule", STR, schedule),
    F(gpujit_profile_step_row, "complete", BOOL, complete),
    F(gpujit_profile_step_row, "start_ms", F64, start_ms),
    F(gpujit_profile_step_row, "wall_ms", F64, wall_ms),
    F(gpujit_profile_step_row, "window_ms", F64, window_ms),
    F(gpujit_profile_step_row, "launches", U64, launches),
    F(gpujit_profile_step_row, "kernels", U64, kernels),
    F(gpujit_profile_step_row, "copies", U64, copies),
    F(gpujit_profile_step_row, "memsets", U64, memsets),
    F(gpujit_profile_step_row, "gpu_ms", F64, gpu_ms),
    F(gpujit_profile_step_row, "busy_ms", F64, busy_ms),
    F(gpujit_profile_step_row, "busy_pct", F64, busy_pct),
    F(gpujit_profile_step_row, "idle_ms", F64, idle_ms),
    F(gpujit_profile_step_row, "gaps", U64, gaps),
    F(gpujit_profile_step_row, "gap_ms", F64, gap_ms),
    F(gpujit_profile_step_row, "gap_median_us", F64, gap_median_us),
    F(gpujit_profile_step_row, "gap_p90_us", F64, gap_p90_us),
    F(gpujit_profile_step_row, "gap_max_us", F64, gap_max_us),
    F(gpujit_profile_step_row, "host_wait_ms", F64, host_wait_ms),
    F(gpujit_profile_step_row, "host_wait_pct", F64, host_wait_pct),
    F(gpujit_profile_step_row, "verdict", STR, verdict),
    F(gpujit_profile_step_row, "summary", STR, summary),
};

static const gpujit_profile_field step_devices[] = {
    F(gpujit_profile_step_device, "step", INT, step),
    F(gpujit_profile_step_device, "device", U32, device),
    F(gpujit_profile_step_device, "ops", U64, ops),
    F(gpujit_profile_step_device, "busy_ms", F64, busy_ms),
    F(gpujit_profile_step_device, "busy_pct", F64, busy_pct),
};

static const gpujit_profile_field step_streams[] = {
    F(gpujit_profile_step_stream, "step", INT, step),
    F(gpujit_profile_step_stream, "device", U32, device),
    F(gpujit_profile_step_stream, "stream", U32, stream),
    F(gpujit_profile_step_stream, "ops", U64, ops),
    F(gpujit_profile_step_stream, "busy_ms", F64, busy_ms),
    F(gpujit_profile_step_stream, "span_ms", F64, span_ms),
    F(gpujit_profile_step_stream, "start_ms", F64, start_ms),
    F(gpujit_profile_step_stream, "gaps", U64, gaps),
    F(gpujit_profile_step_stream, "gap_ms", F64, gap_ms),
    F(gpujit_profile_step_stream, "gap_median_us", F64, gap_median_us),
    F(gpujit_profile_step_stream, "gap_p90_us", F64, gap_p90_us),
    F(gpujit_profile_step_stream, "gap_max_us", F64, gap_max_us),
    F(gpujit_profile_step_stream, "host_wait_ms", F64, host_wait_ms),
};

static const gpujit_profile_field step_kernels[] = {
    F(gpujit_profile_step_kernel, "step", INT, step),
    F(gpujit_profile_step_kernel, "name", STR, name),
    F(gpujit_profile_step_kernel, "count", U64, count),
    F(gpujit_profile_step_kernel, "total_ms", F64, total_ms),
    F(gpujit_profile_step_kernel, "mean_us", F64, mean_us),
};

static const gpujit_profile_field regions[] = {
    F(gpujit_profile_region, "pid", INT, pid),
    F(gpujit_profile_region, "module", STR, module),
    F(gpujit_profile_region, "kernels", STR, kernels),
    F(gpujit_profile_region, "handle", U64, handle),
    F(gpujit_profile_region, "scope", STR, scope),
    F(gpujit_profile_region, "region", STR, region),
    F(gpujit_profile_region, "depth", U32, depth),
    F(gpujit_profile_region, "calls", U64, calls),
    F(gpujit_profile_region, "cycles_mean", F64, cycles_mean),
    F(gpujit_profile_region, "cycles_median", F64, cycles_median),
    F(gpujit_profile_region, "cycles_p99", F64, cycles_p99),
    F(gpujit_profile_region, "cycles_max", F64, cycles_max),
    F(gpujit_profile_region, "ns_mean", F64, ns_mean),
    F(gpujit_profile_region, "ns_median", F64, ns_median),
    F(gpujit_profile_region, "ns_p99", F64, ns_p99),
    F(gpujit_profile_region, "ns_max", F64, ns_max),
    F(gpujit_profile_region, "total_ns", F64, total_ns),
    F(gpujit_profile_region, "sm_imbalance", F64, sm_imbalance),
    F(gpujit_profile_region, "unit_imbalance", F64, unit_imbalance),
    F(gpujit_profile_region, "sms", U32, sms),
    F(gpujit_profile_region, "units", U32, units),
    F(gpujit_profile_region, "reads", U64, reads),
    F(gpujit_profile_region, "events", U64, events),
    F(gpujit_profile_region, "dropped", U64, dropped),
    F(gpujit_profile_region, "unmatched", U64, unmatched),
    F(gpujit_profile_region, "launches", U64, launches),
    F(gpujit_profile_region, "min_call_cycles", U64, min_call_cycles),
};

#define TABLE(a) a, sizeof(a) / sizeof(a[0])
static const struct {
  const char *name;
  const gpujit_profile_field *fields;
  size_t n;
} tables[GPUJIT_PROFILE_NTABLES] = {
    [GPUJIT_PROFILE_TOTALS] = {"totals", TABLE(totals)},
    [GPUJIT_PROFILE_OPTIONS] = {"options", TABLE(options)},
    [GPUJIT_PROFILE_DEVICES] = {"devices", TABLE(devices)},
    [GPUJIT_PROFILE_MODULES] = {"modules", TABLE(modules)},
    [GPUJIT_PROFILE_COMPILES] = {"compiles", TABLE(compiles)},
    [GPUJIT_PROFILE_PROCESSES] = {"processes", TABLE(processes)},
    [GPUJIT_PROFILE_COMPILERS] = {"compilers", TABLE(compilers)},
    [GPUJIT_PROFILE_STAGES] = {"stages", TABLE(stages)},
    [GPUJIT_PROFILE_STEPS] = {"steps", TABLE(steps)},
    [GPUJIT_PROFILE_STEP_DEVICES] = {"step_devices", TABLE(step_devices)},
    [GPUJIT_PROFILE_STEP_STREAMS] = {"step_streams", TABLE(step_streams)},
    [GPUJIT_PROFILE_STEP_KERNELS] = {"step_kernels", TABLE(step_kernels)},
    [GPUJIT_PROFILE_REGIONS] = {"kernel_regions", TABLE(regions)},
};

const gpujit_profile_field *gpujit_profile_fields(gpujit_profile_table table, const char **name, size_t *n)
{
  bool known = (unsigned)table < GPUJIT_PROFILE_NTABLES;
  if (name)
    *name = known ? tables[table].name : NULL;
  if (n)
    *n = known ? tables[table].n : 0;
  return known ? tables[table].fields : NULL;
}

size_t gpujit_profile_table_rows(const gpujit_profile *p, gpujit_profile_table table, const void **rows, size_t *stride)
{
  const void *r = NULL;
  size_t n = 0, size = 0;
  if (p) {
    switch (table) {
    case GPUJIT_PROFILE_TOTALS: r = &p->totals, n = 1, size = sizeof(p->totals); break;
    case GPUJIT_PROFILE_OPTIONS: r = &p->opts, n = 1, size = sizeof(p->opts); break;
    case GPUJIT_PROFILE_DEVICES: r = p->devices, n = p->ndevices, size = sizeof(*p->devices); break;
    case GPUJIT_PROFILE_MODULES: r = p->rows, n = p->nrows, size = sizeof(*p->rows); break;
    case GPUJIT_PROFILE_COMPILES: r = p->compile_rows, n = p->compiles.n, size = sizeof(*p->compile_rows); break;
    case GPUJIT_PROFILE_PROCESSES: r = p->process_rows, n = p->nprocess_rows, size = sizeof(*p->process_rows); break;
    case GPUJIT_PROFILE_COMPILERS: r = p->compilers, n = p->ncompilers, size = sizeof(*p->compilers); break;
    case GPUJIT_PROFILE_STAGES: r = p->stage_rows, n = p->nstage_rows, size = sizeof(*p->stage_rows); break;
    case GPUJIT_PROFILE_STEPS: r = p->step_rows, n = p->nstep_rows, size = sizeof(*p->step_rows); break;
    case GPUJIT_PROFILE_STEP_DEVICES: r = p->step_devices, n = p->nstep_devices, size = sizeof(*p->step_devices); break;
    case GPUJIT_PROFILE_STEP_STREAMS: r = p->step_streams, n = p->nstep_streams, size = sizeof(*p->step_streams); break;
    case GPUJIT_PROFILE_STEP_KERNELS: r = p->step_kernels, n = p->nstep_kernels, size = sizeof(*p->step_kernels); break;
    case GPUJIT_PROFILE_REGIONS: r = p->region_rows, n = p->nregion_rows, size = sizeof(*p->region_rows); break;
    default: break;
    }
  }
  if (rows)
    *rows = n ? r : NULL;
  if (stride)
    *stride = size;
  return n;
}

size_t gpujit_profile_compiles(const gpujit_profile *p, const gpujit_profile_compile **rows)
{
  const void *r;
  size_t n = gpujit_profile_table_rows(p, GPUJIT_PROFILE_COMPILES, &r, NULL);
  if (rows)
    *rows = r;
  return n;
}

size_t gpujit_profile_processes(const gpujit_profile *p, const gpujit_profile_process **rows)
{
  const void *r;
  size_t n = gpujit_profile_table_rows(p, GPUJIT_PROFILE_PROCESSES, &r, NULL);
  if (rows)
    *rows = r;
  return n;
}

int gpujit__profile_views(gpujit_profile *p)
{
  int err;
  uint64_t start = UINT64_MAX;
  size_t nstages = 0;
  for (size_t i = 0; i < p->procs.n; i++)
    if (p->procs.v[i].t0 && p->procs.v[i].t0 < start)
      start = p->procs.v[i].t0;
  for (size_t i = 0; i < p->compiles.n; i++) {
    nstages += (size_t)p->compiles.v[i].nstages;
    if (p->compiles.v[i].t0 && p->compiles.v[i].t0 < start)
      start = p->compiles.v[i].t0;
  }
  if (p->range)
    start = p->range_t0;
  p->compile_rows = calloc(p->compiles.n + 1, sizeof(*p->compile_rows));
  p->process_rows = calloc(p->procs.n + 1, sizeof(*p->process_rows));
  p->stage_rows = calloc(nstages + 1, sizeof(*p->stage_rows));
  if (!p->compile_rows || !p->process_rows || !p->stage_rows)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t i = 0; i < p->compiles.n; i++) {
    const pf_compile *c = &p->compiles.v[i];
    p->compile_rows[i] = (gpujit_profile_compile){
        .kind = c->kind, .name = c->name ? c->name : "", .options = c->options ? c->options : "",
        .log = c->log ? c->log : "", .library = c->lib_path ? c->lib_path : "",
        .module = c->module >= 0 ? p->rows[c->module].name : "", .pid = c->pid, .tid = c->tid,
        .headers = c->headers, .result = c->result, .ms = pf_compile_ms(c), .repeat = c->repeat,
        .ptx_bytes = c->ptx_bytes, .cubin_bytes = c->cubin_bytes, .ltoir_bytes = c->ltoir_bytes, .id = (int)i,
        .within = c->parent, .cache = c->cache, .cpu_ms = (double)c->cpu_ns / 1e6, .start_ms = ms(start, c->t0),
        .stage_of = c->stage_of};
    for (int k = 0; k < c->nstages; k++)
      p->stage_rows[p->nstage_rows++] = (gpujit_profile_stage){
          .compile = (int)i, .name = c->stages[k].name,
          .start_ms = c->stages[k].known ? ms(c->t0, c->stages[k].t0) : -1, .ms = ms(c->stages[k].t0, c->stages[k].t1)};
  }
  for (size_t i = 0; i < p->procs.n; i++) {
    const pf_proc *pr = &p->procs.v[i];
    if (pr->adapter)
      continue;
    p->process_rows[p->nprocess_rows++] = (gpujit_profile_process){
        .pid = pr->pid, .ppid = pr->ppid, .command = pr->cmd ? pr->cmd : "", .ended = pr->ended, .gpu_recorded = pr->gpu};
  }
  if ((err = gpujit__profile_steps(p)) < 0)
    return err;
  return gpujit__profile_regions(p);
}
