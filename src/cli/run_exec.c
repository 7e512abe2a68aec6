/* `gpujit run`'s execute half, one function per phase: the device, the module loaded, the
 * buffers, the first launch and warm-up, the measurement (timed launches or a benchmark), the
 * copy-back and the timing region's close. Each returns an exit code; what it made stays in the
 * run_cmd for the next phase and for cmd_run's cleanup. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

static int run_all(run_ctx *r)
{
  for (size_t i = 0; i < r->nlaunches; i++) {
    launch *l = &r->launches[i];
    int err = gpujit_launch(l->k, l->grid, l->block, l->shared, l->argv);
    if (err < 0)
      return err;
  }
  return 0;
}

static int bench_fn(void *payload) { return run_all(payload); }

/* Stages run under scoped timers: an NVTX range each (for nsys and ncu), "<name> took X ms" with -v. */
static void stage_start(gpujit_timer **t, gpujit_device *dev, const char *name)
{
  if (gpujit_timer_start(t, dev, name, GPUJIT_TIMER_SYNCHRONIZE | GPUJIT_TIMER_NVTX, 0) < 0)
    *t = NULL;
}

static void stage_stop(cli_ctx *ctx, gpujit_timer **tp)
{
  gpujit_timer *t = *tp;
  double ms = 0;
  char name[128];
  *tp = NULL; /* stopped timers are freed */
  if (!t)
    return;
  snprintf(name, sizeof(name), "%s", gpujit_timer_name(t));
  if (gpujit_timer_stop(t, &ms) == 0 && ctx->verbose > 0)
    fprintf(stderr, "%s took %.3f ms\n", name, ms);
}

static bool printing(const run_cmd *c) { return !c->ma.json && c->ctx->verbose >= 0; }

/* The compile half's report, printed (the execute half's follows it). */
static void print_compile_half(run_cmd *c)
{
  compile_report(c->m, c->mj, c->ma.cache != NULL, c->load_ms, c->first_ms);
  print_compile(c->mj, c->phases);
}

/* No device: the compile half is still reported, then "execution unavailable". */
static int no_device(run_cmd *c, int err)
{
  compile_report(c->m, c->mj, c->ma.cache != NULL, -1, -1);
  if (c->ma.json) {
    cJSON_AddStringToObject(c->out, "execution", gpujit_error_last());
    cli_json_emit(c->ctx, c->out, "gpujit-run", c->ma.json_file), c->out = NULL;
  } else if (c->ctx->verbose >= 0) {
    print_compile(c->mj, c->phases);
  }
  fflush(stdout);
  fprintf(stderr, "%s: execution unavailable: %s\n", c->ctx->prog, gpujit_error_last());
  return cli_exit_code(err);
}

int run_open_device(run_cmd *c)
{
  gpujit_device_info info;
  uint64_t free_mem = 0, need = 0;
  cJSON *dj;
  int err;
  if ((err = gpujit_device_open(&c->r.dev, (int)c->o.device)) < 0)
    return no_device(c, err);
  dj = cJSON_AddObjectToObject(c->out, "device");
  gpujit_device_info_get(c->r.dev, &info);
  cJSON_AddNumberToObject(dj, "ordinal", info.ordinal);
  cJSON_AddStringToObject(dj, "name", info.name);
  cJSON_AddNumberToObject(dj, "cc", info.cc_major * 10 + info.cc_minor);
  gpujit_device_free_memory(c->r.dev, &free_mem);
  for (size_t i = 0; i < c->r.nbuffers; i++)
    need += c->r.buffers[i].bytes;
  if (need > free_mem) {
    fprintf(stderr, "%s: run: the buffers need %llu bytes; the device has %llu free\n", c->ctx->prog,
            (unsigned long long)need, (unsigned long long)free_mem);
    return EXIT_USAGE;
  }
  if ((err = gpujit_timing_set_source(c->r.dev, c->o.timer)) < 0)
    return cli_fail(c->ctx, err);
  cJSON_AddStringToObject(c->out, "timer", gpujit_timer_source_name(c->o.timer));
  return EXIT_OK;
}

int run_load(run_cmd *c)
{
  uint64_t span = 0;
  int err;
  gpujit_trace_span_begin(c->ma.trace, &span, "gpujit", "load module");
  stage_start(&c->timer, c->r.dev, "load");
  err = gpujit_module_load(&c->loaded, c->r.dev, c->m);
  stage_stop(c->ctx, &c->timer);
  gpujit_trace_span_end(c->ma.trace, span);
  if (err < 0)
    return cli_fail(c->ctx, err);
  c->load_ms = gpujit_loaded_load_ms(c->loaded);
  for (size_t i = 0; i < c->r.nlaunches; i++) {
    launch *l = &c->r.launches[i];
    if ((err = gpujit_kernel_get(&l->k, c->loaded, l->kernel)) < 0 ||
        (err = gpujit_launch_check(l->k, l->grid, l->block, l->shared)) < 0) {
      fprintf(stderr, "%s: run: %s\n", c->ctx->prog, gpujit_error_last());
      return EXIT_USAGE;
    }
  }
  return EXIT_OK;
}

/* Every argument pointed at its value: a buffer's device pointer, a named buffer's, or the value. */
static void wire_arguments(run_ctx *r)
{
  size_t bi = 0;
  for (size_t i = 0; i < r->nlaunches; i++) {
    launch *l = &r->launches[i];
    for (size_t k = 0; k < l->nargs; k++) {
      gpujit_arg_spec *s = &l->args[k];
      if (s->type == GPUJIT_ARG_BUFFER) {
        l->ptrs[k] = r->buffers[bi++].ptr;
        l->argv[k] = &l->ptrs[k];
      } else if (s->type == GPUJIT_ARG_REF) {
        l->ptrs[k] = find_buffer(r, s->name)->ptr;
        l->argv[k] = &l->ptrs[k];
      } else {
        l->argv[k] = &s->value;
      }
    }
  }
}

int run_buffers(run_cmd *c)
{
  uint64_t span = 0;
  int err;
  if ((err = gpujit_timing_begin(c->r.dev, GPUJIT_TIMING_ALL)) < 0)
    return cli_fail(c->ctx, err);
  gpujit_trace_span_begin(c->ma.trace, &span, "gpujit", "initialise buffers");
  for (size_t i = 0; i < c->r.nbuffers; i++) {
    buffer *b = &c->r.buffers[i];
    void *host = malloc(b->bytes);
    if (!host) {
      fprintf(stderr, "%s: run: cannot allocate %zu host bytes\n", c->ctx->prog, b->bytes);
      return EXIT_FAILURE_;
    }
    gpujit_arg_fill(host, b->spec);
    err = gpujit_mem_alloc(&b->ptr, c->r.dev, b->bytes);
    if (err == 0)
      err = gpujit_memcpy_htod(c->r.dev, b->ptr, host, b->bytes);
    free(host);
    if (err < 0)
      return cli_fail(c->ctx, err);
  }
  gpujit_trace_span_end(c->ma.trace, span);
  wire_arguments(&c->r);
  return EXIT_OK;
}

int run_warm(run_cmd *c)
{
  double t0 = gpujit_trace_now_us();
  uint64_t span = 0;
  int err;
  /* First launch: includes lazy loading of the functions. */
  gpujit_trace_span_begin(c->ma.trace, &span, "gpujit", "first launch");
  err = run_all(&c->r);
  if (err == 0)
    err = gpujit_synchronize(c->r.dev);
  gpujit_trace_span_end(c->ma.trace, span);
  c->first_ms = (gpujit_trace_now_us() - t0) / 1e3;
  if (err < 0)
    return cli_fail(c->ctx, err);
  gpujit_trace_span_begin(c->ma.trace, &span, "gpujit", "warm-up");
  for (long w = 0; w < c->o.warmup && err == 0; w++)
    err = run_all(&c->r);
  if (err == 0)
    err = gpujit_synchronize(c->r.dev);
  gpujit_trace_span_end(c->ma.trace, span);
  return err < 0 ? cli_fail(c->ctx, err) : EXIT_OK;
}

/* What compiling cost, to set against a launch: compile and link, or what a hit saved. */
static double compile_cost(const gpujit_module *m)
{
  gpujit_module_timings t;
  gpujit_module_timings_get(m, &t);
  return t.compile_ms + t.link_ms > 0 ? t.compile_ms + t.link_ms : t.saved_ms;
}

static void print_bench(const run_cmd *c, const gpujit_bench_result *br, const char *stop, double cost)
{
  printf("benchmark (%zu launch%s per sample, %zu samples, %.2f s, stopped by %s)\n", c->r.nlaunches,
         c->r.nlaunches == 1 ? "" : "es", br->gpu.n, br->elapsed_s, stop);
  printf("  GPU ms  min %.6f  median %.6f  mean %.6f  max %.6f  stdev %.6f  noise %.2f%%\n", br->gpu.min,
         br->gpu.median, br->gpu.mean, br->gpu.max, br->gpu.stdev, br->gpu.noise * 100);
  printf("  CPU ms  min %.6f  median %.6f  mean %.6f  max %.6f  stdev %.6f  noise %.2f%%\n", br->cpu.min,
         br->cpu.median, br->cpu.mean, br->cpu.max, br->cpu.stdev, br->cpu.noise * 100);
  printf("  break-even  %.0f samples (compile %.1f ms / %.6f ms)\n", br->gpu.median > 0 ? cost / br->gpu.median : 0,
         cost, br->gpu.median);
}

/* --bench: the timing region closed first (the benchmark times its samples itself, with no extra
 * events), then samples until the noise, the timeout or the sample cap stops it. */
static int run_bench(run_cmd *c)
{
  static const char *const stops[] = {"noise", "timeout", "max_samples"};
  gpujit_bench_options bo = GPUJIT_BENCH_OPTIONS_INIT;
  gpujit_bench_result br;
  cJSON *bj = cJSON_AddObjectToObject(c->out, "benchmark");
  double cost = compile_cost(c->m), t0;
  uint64_t span = 0;
  int err;
  bo.warmup = 0;
  bo.max_noise = c->o.noise;
  bo.timeout_s = c->o.timeout;
  bo.l2_flush = c->o.l2_flush;
  gpujit_timing_end(&c->res, &c->nres, c->r.dev);
  trace_results(c->ma.trace, c->res, c->nres, c->res && c->nres ? c->res[0].device : 0);
  free(c->res);
  c->res = NULL;
  gpujit_trace_span_begin(c->ma.trace, &span, "gpujit", "benchmark");
  run_regions_reset(c, (double)bo.max_samples);
  t0 = gpujit_trace_now_us();
  err = gpujit_benchmark(&br, NULL, c->r.dev, bench_fn, &c->r, &bo);
  gpujit_trace_span_end(c->ma.trace, span);
  if (err < 0)
    return cli_fail(c->ctx, err);
  if ((err = run_regions_collect(c, br.gpu.mean * (double)br.gpu.n, (unsigned)(br.gpu.n * c->r.nlaunches), t0)) !=
      EXIT_OK)
    return err;
  cJSON_AddItemToObject(bj, "gpu_ms", stats_json(&br.gpu));
  cJSON_AddItemToObject(bj, "cpu_ms", stats_json(&br.cpu));
  cJSON_AddStringToObject(bj, "stopped_by", stops[br.stop]);
  cJSON_AddNumberToObject(bj, "seconds", br.elapsed_s);
  cJSON_AddNumberToObject(bj, "break_even_launches", br.gpu.median > 0 ? cost / br.gpu.median : 0);
  if (printing(c)) {
    print_compile_half(c);
    print_bench(c, &br, stops[br.stop], cost);
    run_regions_print(c);
  }
  return EXIT_OK;
}

/* The timed launches' results split by launch of the plan: each sample is one launch, in order. */
static int per_launch_stats(const run_cmd *c, const gpujit_timing_result *mark, size_t nm, kstats *ks)
{
  uint64_t first_order = nm ? mark[0].order : 0;
  double *samples = malloc((nm + 1) * sizeof(double));
  if (!samples)
    return GPUJIT_ENOMEM;
  for (size_t li = 0; li < c->r.nlaunches; li++) {
    size_t n = 0;
    double lus = 0;
    for (size_t i = 0; i < nm; i++)
      if ((mark[i].order - first_order) % c->r.nlaunches == li) {
        samples[n++] = mark[i].elapsed_ms;
        lus += mark[i].launch_us;
      }
    ks[li].name = gpujit_kernel_name(c->r.launches[li].k);
    ks[li].n = n;
    ks[li].launch_us = n ? lus / (double)n : 0;
    if (n)
      gpujit_stats_compute(&ks[li].gpu, samples, n);
  }
  free(samples);
  return 0;
}

/* --repeat timed launches of the whole plan, in a kernel-only region inside the run's. */
static int timed_launches(run_cmd *c, kstats *ks)
{
  gpujit_timing_result *mark = NULL;
  size_t nm = 0;
  uint64_t span = 0;
  int err;
  gpujit_trace_span_begin(c->ma.trace, &span, "gpujit", "timed launches");
  stage_start(&c->timer, c->r.dev, "timed launches");
  run_regions_reset(c, (double)c->o.repeat); /* the regions of these launches alone, not the warm-up's */
  /* The region opened before the copies: timed launches are those after this mark. */
  if ((err = gpujit_timing_begin(c->r.dev, GPUJIT_TIMING_KERNEL)) < 0)
    return cli_fail(c->ctx, err);
  for (long k = 0; k < c->o.repeat && err == 0; k++)
    err = run_all(&c->r);
  if (err == 0)
    err = gpujit_timing_end(&mark, &nm, c->r.dev);
  stage_stop(c->ctx, &c->timer);
  gpujit_trace_span_end(c->ma.trace, span);
  if (err == 0)
    err = per_launch_stats(c, mark, nm, ks);
  if (err == 0) {
    double kernel_ms = 0;
    int rc;
    for (size_t i = 0; i < nm; i++)
      kernel_ms += mark[i].elapsed_ms;
    rc = run_regions_collect(c, kernel_ms, (unsigned)nm, nm ? mark[0].start_us : 0);
    free(mark);
    return rc;
  }
  free(mark);
  return cli_fail(c->ctx, err);
}

static void print_kernel(const launch *l, const kstats *k, const gpujit_kernel_attrs *at, double be, double cost)
{
  printf("kernel %s%s%s%s  grid %u,%u,%u  block %u,%u,%u  %d regs  (%zu timed launches)\n", k->name,
         l->expr[0] ? " (" : "", l->expr, l->expr[0] ? ")" : "", l->grid[0], l->grid[1], l->grid[2], l->block[0],
         l->block[1], l->block[2], at->registers, k->n);
  printf("  GPU ms  min %.6f  median %.6f  mean %.6f  max %.6f  stdev %.6f  noise %.2f%%\n", k->gpu.min,
         k->gpu.median, k->gpu.mean, k->gpu.max, k->gpu.stdev, k->gpu.noise * 100);
  printf("  host launch overhead  %.2f us\n", k->launch_us);
  printf("  break-even  %.0f launches (compile %.1f ms / %.6f ms per launch)\n", be, cost, k->gpu.median);
}

int run_measure(run_cmd *c)
{
  kstats ks[MAX_LAUNCHES];
  cJSON *karr = cJSON_AddArrayToObject(c->out, "kernels");
  double cost = compile_cost(c->m);
  int rc;
  memset(ks, 0, sizeof(ks));
  if (c->o.bench)
    return run_bench(c);
  if ((rc = timed_launches(c, ks)) != EXIT_OK)
    return rc;
  if (printing(c))
    print_compile_half(c);
  for (size_t i = 0; i < c->r.nlaunches; i++) {
    const launch *l = &c->r.launches[i];
    cJSON *kj = cJSON_CreateObject();
    gpujit_kernel_attrs at;
    double be = ks[i].gpu.median > 0 ? cost / ks[i].gpu.median : 0;
    gpujit_kernel_attrs_get(l->k, &at);
    cJSON_AddStringToObject(kj, "kernel", ks[i].name);
    if (l->expr[0])
      cJSON_AddStringToObject(kj, "name_expression", l->expr);
    cJSON_AddItemToObject(kj, "gpu_ms", stats_json(&ks[i].gpu));
    cJSON_AddNumberToObject(kj, "host_launch_us", ks[i].launch_us);
    cJSON_AddNumberToObject(kj, "registers", at.registers);
    cJSON_AddNumberToObject(kj, "break_even_launches", be);
    cJSON_AddItemToArray(karr, kj);
    if (printing(c))
      print_kernel(l, &ks[i], &at, be, cost);
  }
  run_regions_print(c);
  return EXIT_OK;
}

/* One buffer copied back: its checksum and sum, its file when one was named. */
static int copy_back_one(run_cmd *c, const buffer *b, cJSON *barr)
{
  void *host;
  double sum;
  char hex[17];
  int err = 0;
  cJSON *o;
  if (!(host = malloc(b->bytes)) || (err = gpujit_memcpy_dtoh(c->r.dev, host, b->ptr, b->bytes)) < 0) {
    free(host);
    return host ? cli_fail(c->ctx, err) : EXIT_FAILURE_;
  }
  checksum(b, host, &sum, hex);
  if (b->spec->out_file[0]) {
    FILE *f = fopen(b->spec->out_file, "wb");
    if (!f || fwrite(host, 1, b->bytes, f) != b->bytes) {
      fprintf(stderr, "%s: error: cannot write %s: %s\n", c->ctx->prog, b->spec->out_file, strerror(errno));
      if (f)
        fclose(f);
      free(host);
      return EXIT_IO;
    }
    fclose(f);
  }
  free(host);
  o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", b->spec->name[0] ? b->spec->name : "");
  cJSON_AddNumberToObject(o, "count", (double)b->spec->count);
  cJSON_AddNumberToObject(o, "sum", sum);
  cJSON_AddStringToObject(o, "fnv1a64", hex);
  if (b->spec->out_file[0])
    cJSON_AddStringToObject(o, "file", b->spec->out_file);
  cJSON_AddItemToArray(barr, o);
  if (printing(c))
    printf("buffer %s  %llu elements  sum %.9g  fnv1a64 %s%s%s\n", b->spec->name[0] ? b->spec->name : "(unnamed)",
           (unsigned long long)b->spec->count, sum, hex, b->spec->out_file[0] ? "  -> " : "", b->spec->out_file);
  return EXIT_OK;
}

int run_copy_back(run_cmd *c)
{
  cJSON *barr = cJSON_AddArrayToObject(c->out, "buffers");
  int rc;
  for (size_t i = 0; i < c->r.nbuffers; i++) {
    const buffer *b = &c->r.buffers[i];
    if (!b->spec->out_checksum && !b->spec->out_file[0])
      continue;
    if ((rc = copy_back_one(c, b, barr)) != EXIT_OK)
      return rc;
  }
  return EXIT_OK;
}

int run_finish_timing(run_cmd *c)
{
  int err;
  if (c->o.bench) /* the benchmark closed the region before it began */
    return EXIT_OK;
  if ((err = gpujit_timing_end(&c->res, &c->nres, c->r.dev)) < 0)
    return cli_fail(c->ctx, err);
  trace_results(c->ma.trace, c->res, c->nres, c->res && c->nres ? c->res[0].device : 0);
  if (gpujit_timing_dropped(c->r.dev)) { /* CUPTI said it lost records: the tables lack them */
    cJSON_AddNumberToObject(c->out, "cupti_dropped", (double)gpujit_timing_dropped(c->r.dev));
    cli_warn(c->ctx, "CUPTI dropped %llu activity records", (unsigned long long)gpujit_timing_dropped(c->r.dev));
  }
  if (c->o.timeline && !c->ma.json) {
    char *text = NULL;
    if (gpujit_timing_format(&text, c->res, c->nres, GPUJIT_REPORT_ALL) == 0)
      printf("%s", text);
    gpujit_free(text);
  }
  return EXIT_OK;
}
