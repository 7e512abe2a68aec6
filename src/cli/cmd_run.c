/* `gpujit run`: build, load and run kernels under the timing layer; compile vs execute report. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static bool parse_timer(const char *s, gpujit_timer_source *out)
{
  for (int i = GPUJIT_TIMER_EVENTS; i <= GPUJIT_TIMER_CUPTI_CONCURRENT; i++)
    if (!strcmp(s, gpujit_timer_source_name((gpujit_timer_source)i))) {
      *out = (gpujit_timer_source)i;
      return true;
    }
  return false;
}

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

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
  static run_ctx r;
  cli_module_args ma;
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "run"};
  const char *kernel = NULL, *grid = NULL, *block = NULL, *launch_file = NULL;
  gpujit_arg_spec cli_args_specs[MAX_ARGS];
  size_t ncli = 0;
  long warmup = 3, repeat = 20, shared = 0, device = -1;
  double noise = 0.005, timeout = 15;
  gpujit_timer_source timer_source = GPUJIT_TIMER_EVENTS;
  bool bench = false, l2_flush = false, timeline = false, ncu = false;
  gpujit_module *m = NULL;
  gpujit_loaded *loaded = NULL;
  gpujit_timing_result *res = NULL;
  size_t nres = 0;
  cJSON *out = cJSON_CreateObject(), *mj = cJSON_AddObjectToObject(out, "module");
  double phases[4], load_ms = -1, first_ms = -1;
  gpujit_timer *timer = NULL;
  int err, rc = EXIT_OK;
  uint64_t span = 0;

  memset(&r, 0, sizeof(r));
  cli_module_args_init(&ma);
  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    int m_r;
    if (cli_end_of_options(&a)) {
      continue;
    } else if (cli_opt(&a, "-h", false) || cli_opt(&a, "--help", false)) {
      run_help();
      cJSON_Delete(out);
      return EXIT_OK;
    } else if (cli_opt(&a, "--kernel", true)) {
      kernel = a.value;
    } else if (cli_opt(&a, "--grid", true)) {
      grid = a.value;
    } else if (cli_opt(&a, "--block", true)) {
      block = a.value;
    } else if (cli_opt(&a, "--shared", true)) {
      if (!a.failed && !cli_parse_int(a.value, 0, 1 << 30, &shared)) {
        rc = cli_usage_error(ctx, "run", "invalid --shared '%s'", a.value);
        goto done;
      }
    } else if (cli_opt(&a, "--arg", true)) {
      if (a.failed)
        break;
      if (ncli == MAX_ARGS) {
        rc = cli_usage_error(ctx, "run", "at most %d --arg", MAX_ARGS);
        goto done;
      }
      if (gpujit_arg_spec_parse(&cli_args_specs[ncli++], a.value) < 0) {
        rc = cli_usage_error(ctx, "run", "%s", gpujit_error_last());
        goto done;
      }
    } else if (cli_opt(&a, "--launch", true)) {
      launch_file = a.value;
    } else if (cli_opt(&a, "--warmup", true)) {
      if (!a.failed && !cli_parse_int(a.value, 0, 1000000, &warmup)) {
        rc = cli_usage_error(ctx, "run", "invalid --warmup '%s'", a.value);
        goto done;
      }
    } else if (cli_opt(&a, "--repeat", true)) {
      if (!a.failed && !cli_parse_int(a.value, 1, 10000000, &repeat)) {
        rc = cli_usage_error(ctx, "run", "invalid --repeat '%s' (at least 1)", a.value);
        goto done;
      }
    } else if (cli_opt(&a, "--device", true)) {
      if (!a.failed && !cli_parse_int(a.value, 0, 1024, &device)) {
        rc = cli_usage_error(ctx, "run", "invalid --device '%s'", a.value);
        goto done;
      }
    } else if (cli_opt(&a, "--noise", true)) {
      char *end;
      noise = a.failed ? 0 : strtod(a.value, &end);
      if (!a.failed && (*end || noise <= 0 || noise >= 1)) {
        rc = cli_usage_error(ctx, "run", "invalid --noise '%s' (a fraction, e.g. 0.005)", a.value);
        goto done;
      }
    } else if (cli_opt(&a, "--timeout", true)) {
      char *end;
      timeout = a.failed ? 0 : strtod(a.value, &end);
      if (!a.failed && (*end || timeout <= 0)) {
        rc = cli_usage_error(ctx, "run", "invalid --timeout '%s' (seconds)", a.value);
        goto done;
      }
    } else if (cli_opt(&a, "--bench", false)) {
      bench = true;
    } else if (cli_opt(&a, "--l2-flush", false)) {
      l2_flush = true;
    } else if (cli_opt(&a, "--timer", true)) {
      if (a.failed || !parse_timer(a.value, &timer_source)) {
        rc = cli_usage_error(ctx, "run", "invalid --timer '%s' (events, cupti or cupti-concurrent)",
                             a.value ? a.value : "");
        goto done;
      }
    } else if (cli_opt(&a, "--timeline", false)) {
      timeline = true;
    } else if (cli_opt(&a, "--ncu-command", false)) {
      ncu = true;
    } else if ((m_r = cli_module_opt(ctx, &a, &ma)) != 0) {
      if (m_r < 0) {
        rc = -m_r;
        goto done;
      }
    } else {
      rc = cli_unknown_option(ctx, &a, "run");
      goto done;
    }
    if (a.failed) {
      rc = cli_usage_error(ctx, "run", "option '%s' needs a value", arg);
      goto done;
    }
  }
  if (a.failed) {
    rc = cli_usage_error(ctx, "run", "option '%s' needs a value", argv[argc - 1]);
    goto done;
  }
  /* The plan: one launch from the command line, or a launch file. */
  if (launch_file) {
    if (kernel || grid || block || ncli) {
      rc = cli_usage_error(ctx, "run", "--launch excludes --kernel, --grid, --block and --arg");
      goto done;
    }
    if ((rc = load_launch_file(ctx, &r, launch_file)) != EXIT_OK)
      goto done;
  } else {
    launch *l = &r.launches[0];
    if (!grid || !block) {
      rc = cli_usage_error(ctx, "run", "give --grid and --block (or --launch SPEC.json)");
      goto done;
    }
    if (!parse_dims(grid, l->grid) || !parse_dims(block, l->block)) {
      rc = cli_usage_error(ctx, "run", "invalid --%s '%s': expected X[,Y,Z] of positive numbers",
                           parse_dims(grid, l->grid) ? "block" : "grid", parse_dims(grid, l->grid) ? block : grid);
      goto done;
    }
    snprintf(l->kernel, sizeof(l->kernel), "%s", kernel ? kernel : "");
    l->shared = (unsigned)shared;
    memcpy(l->args, cli_args_specs, ncli * sizeof(cli_args_specs[0]));
    l->nargs = ncli;
    r.nlaunches = 1;
  }
  if ((rc = cli_module_prepare(ctx, &ma, "run", true)) != EXIT_OK)
    goto done;
  if ((rc = cli_module_build(ctx, &ma, &m)) != EXIT_OK)
    goto done;
  if (!launch_file && !kernel) {
    if (gpujit_module_kernel_count(m) != 1) {
      rc = cli_usage_error(ctx, "run", "the module has %zu kernels: name one with --kernel", gpujit_module_kernel_count(m));
      goto done;
    }
    snprintf(r.launches[0].kernel, sizeof(r.launches[0].kernel), "%s", gpujit_module_kernel(m, 0));
  }
  if ((rc = validate_plan(ctx, &r, m)) != EXIT_OK)
    goto done;
  if (ncu) { /* the command that would run: this one, under ncu */
    char **full = calloc((size_t)argc + 2, sizeof(*full)), self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[len > 0 ? len : 0] = '\0';
    full[0] = len > 0 ? self : "gpujit";
    for (int i = 0; i < argc; i++)
      full[i + 1] = argv[i];
    const char *launched[MAX_LAUNCHES];
    for (size_t i = 0; i < r.nlaunches; i++) /* symbols, resolved by validate_plan */
      launched[i] = r.launches[i].kernel;
    cli_print_ncu_commands(m, ma.cache, argc + 1, full, launched, r.nlaunches);
    free(full);
    goto done;
  }
  phase_times(m, phases);

  /* The execute half. */
  if ((err = gpujit_device_open(&r.dev, (int)device)) < 0) {
    compile_report(m, mj, ma.cache != NULL, -1, -1);
    if (ma.json) {
      cJSON_AddStringToObject(out, "execution", gpujit_error_last());
      cli_json_emit(ctx, out, "gpujit-run", ma.json_file), out = NULL;
    } else if (ctx->verbose >= 0) {
      print_compile(mj, phases);
    }
    fflush(stdout);
    fprintf(stderr, "%s: execution unavailable: %s\n", ctx->prog, gpujit_error_last());
    rc = cli_exit_code(err);
    goto done;
  }
  {
    gpujit_device_info info;
    uint64_t free_mem = 0, need = 0;
    cJSON *dj = cJSON_AddObjectToObject(out, "device");
    gpujit_device_info_get(r.dev, &info);
    cJSON_AddNumberToObject(dj, "ordinal", info.ordinal);
    cJSON_AddStringToObject(dj, "name", info.name);
    cJSON_AddNumberToObject(dj, "cc", info.cc_major * 10 + info.cc_minor);
    gpujit_device_free_memory(r.dev, &free_mem);
    for (size_t i = 0; i < r.nbuffers; i++)
      need += r.buffers[i].bytes;
    if (need > free_mem) {
      fprintf(stderr, "%s: run: the buffers need %llu bytes; the device has %llu free\n", ctx->prog,
              (unsigned long long)need, (unsigned long long)free_mem);
      rc = EXIT_USAGE;
      goto done;
    }
  }
  if ((err = gpujit_timing_set_source(r.dev, timer_source)) < 0) {
    rc = cli_fail(ctx, err);
    goto done;
  }
  cJSON_AddStringToObject(out, "timer", gpujit_timer_source_name(timer_source));
  gpujit_trace_span_begin(ma.trace, &span, "gpujit", "load module");
  stage_start(&timer, r.dev, "load");
  err = gpujit_module_load(&loaded, r.dev, m);
  stage_stop(ctx, &timer);
  gpujit_trace_span_end(ma.trace, span);
  if (err < 0) {
    rc = cli_fail(ctx, err);
    goto done;
  }
  load_ms = gpujit_loaded_load_ms(loaded);
  for (size_t i = 0; i < r.nlaunches; i++) {
    launch *l = &r.launches[i];
    if ((err = gpujit_kernel_get(&l->k, loaded, l->kernel)) < 0 ||
        (err = gpujit_launch_check(l->k, l->grid, l->block, l->shared)) < 0) {
      fprintf(stderr, "%s: run: %s\n", ctx->prog, gpujit_error_last());
      rc = EXIT_USAGE;
      goto done;
    }
  }
  /* Buffers: allocate, initialise, and wire every argument. */
  if ((err = gpujit_timing_begin(r.dev, GPUJIT_TIMING_ALL)) < 0) {
    rc = cli_fail(ctx, err);
    goto done;
  }
  gpujit_trace_span_begin(ma.trace, &span, "gpujit", "initialise buffers");
  for (size_t i = 0; i < r.nbuffers; i++) {
    buffer *b = &r.buffers[i];
    void *host = malloc(b->bytes);
    if (!host) {
      fprintf(stderr, "%s: run: cannot allocate %zu host bytes\n", ctx->prog, b->bytes);
      rc = EXIT_FAILURE_;
      goto done;
    }
    gpujit_arg_fill(host, b->spec);
    err = gpujit_mem_alloc(&b->ptr, r.dev, b->bytes);
    if (err == 0)
      err = gpujit_memcpy_htod(r.dev, b->ptr, host, b->bytes);
    free(host);
    if (err < 0) {
      rc = cli_fail(ctx, err);
      goto done;
    }
  }
  gpujit_trace_span_end(ma.trace, span);
  {
    size_t bi = 0;
    for (size_t i = 0; i < r.nlaunches; i++) {
      launch *l = &r.launches[i];
      for (size_t k = 0; k < l->nargs; k++) {
        gpujit_arg_spec *s = &l->args[k];
        if (s->type == GPUJIT_ARG_BUFFER) {
          l->ptrs[k] = r.buffers[bi++].ptr;
          l->argv[k] = &l->ptrs[k];
        } else if (s->type == GPUJIT_ARG_REF) {
          l->ptrs[k] = find_buffer(&r, s->name)->ptr;
          l->argv[k] = &l->ptrs[k];
        } else {
          l->argv[k] = &s->value;
        }
      }
    }
  }
  /* First launch: includes lazy loading of the functions. */
  {
    double t0 = gpujit_trace_now_us();
    gpujit_trace_span_begin(ma.trace, &span, "gpujit", "first launch");
    err = run_all(&r);
    if (err == 0)
      err = gpujit_synchronize(r.dev);
    gpujit_trace_span_end(ma.trace, span);
    first_ms = (gpujit_trace_now_us() - t0) / 1e3;
    if (err < 0) {
      rc = cli_fail(ctx, err);
      goto done;
    }
  }
  gpujit_trace_span_begin(ma.trace, &span, "gpujit", "warm-up");
  for (long w = 0; w < warmup && err == 0; w++)
    err = run_all(&r);
  if (err == 0)
    err = gpujit_synchronize(r.dev);
  gpujit_trace_span_end(ma.trace, span);
  if (err < 0) {
    rc = cli_fail(ctx, err);
    goto done;
  }
  {
    kstats ks[MAX_LAUNCHES];
    size_t nks = 0;
    cJSON *karr = cJSON_AddArrayToObject(out, "kernels");
    double compile_cost;
    gpujit_module_timings t;
    gpujit_module_timings_get(m, &t);
    compile_cost = t.compile_ms + t.link_ms > 0 ? t.compile_ms + t.link_ms : t.saved_ms;
    memset(ks, 0, sizeof(ks));
    if (bench) {
      gpujit_bench_options bo = GPUJIT_BENCH_OPTIONS_INIT;
      gpujit_bench_result br;
      cJSON *bj = cJSON_AddObjectToObject(out, "benchmark");
      static const char *const stops[] = {"noise", "timeout", "max_samples"};
      bo.warmup = 0;
      bo.max_noise = noise;
      bo.timeout_s = timeout;
      bo.l2_flush = l2_flush;
      /* Close the timing region: the benchmark times samples itself, with no extra events. */
      gpujit_timing_end(&res, &nres, r.dev);
      trace_results(ma.trace, res, nres, res && nres ? res[0].device : 0);
      free(res);
      res = NULL;
      gpujit_trace_span_begin(ma.trace, &span, "gpujit", "benchmark");
      err = gpujit_benchmark(&br, NULL, r.dev, bench_fn, &r, &bo);
      gpujit_trace_span_end(ma.trace, span);
      if (err < 0) {
        rc = cli_fail(ctx, err);
        goto done;
      }
      cJSON_AddItemToObject(bj, "gpu_ms", stats_json(&br.gpu));
      cJSON_AddItemToObject(bj, "cpu_ms", stats_json(&br.cpu));
      cJSON_AddStringToObject(bj, "stopped_by", stops[br.stop]);
      cJSON_AddNumberToObject(bj, "seconds", br.elapsed_s);
      cJSON_AddNumberToObject(bj, "break_even_launches", br.gpu.median > 0 ? compile_cost / br.gpu.median : 0);
      if (!ma.json && ctx->verbose >= 0) {
        compile_report(m, mj, ma.cache != NULL, load_ms, first_ms);
        print_compile(mj, phases);
        printf("benchmark (%zu launch%s per sample, %zu samples, %.2f s, stopped by %s)\n", r.nlaunches,
               r.nlaunches == 1 ? "" : "es", br.gpu.n, br.elapsed_s, stops[br.stop]);
        printf("  GPU ms  min %.6f  median %.6f  mean %.6f  max %.6f  stdev %.6f  noise %.2f%%\n", br.gpu.min,
               br.gpu.median, br.gpu.mean, br.gpu.max, br.gpu.stdev, br.gpu.noise * 100);
        printf("  CPU ms  min %.6f  median %.6f  mean %.6f  max %.6f  stdev %.6f  noise %.2f%%\n", br.cpu.min,
               br.cpu.median, br.cpu.mean, br.cpu.max, br.cpu.stdev, br.cpu.noise * 100);
        printf("  break-even  %.0f samples (compile %.1f ms / %.6f ms)\n",
               br.gpu.median > 0 ? compile_cost / br.gpu.median : 0, compile_cost, br.gpu.median);
      }
    } else {
      uint64_t first_order = 0;
      double *samples;
      gpujit_trace_span_begin(ma.trace, &span, "gpujit", "timed launches");
      stage_start(&timer, r.dev, "timed launches");
      /* The region opened before the copies: timed launches are those after this mark. */
      {
        gpujit_timing_result *mark = NULL;
        size_t nm = 0;
        if ((err = gpujit_timing_begin(r.dev, GPUJIT_TIMING_KERNEL)) < 0) {
          rc = cli_fail(ctx, err);
          goto done;
        }
        for (long k = 0; k < repeat && err == 0; k++)
          err = run_all(&r);
        if (err == 0)
          err = gpujit_timing_end(&mark, &nm, r.dev);
        stage_stop(ctx, &timer);
        gpujit_trace_span_end(ma.trace, span);
        if (err < 0) {
          rc = cli_fail(ctx, err);
          free(mark);
          goto done;
        }
        first_order = nm ? mark[0].order : 0;
        samples = malloc((nm + 1) * sizeof(double));
        for (size_t li = 0; li < r.nlaunches; li++) {
          size_t n = 0;
          double lus = 0;
          for (size_t i = 0; i < nm; i++)
            if ((mark[i].order - first_order) % r.nlaunches == li) {
              samples[n++] = mark[i].elapsed_ms;
              lus += mark[i].launch_us;
            }
          ks[nks].name = gpujit_kernel_name(r.launches[li].k);
          ks[nks].n = n;
          ks[nks].launch_us = n ? lus / (double)n : 0;
          if (n)
            gpujit_stats_compute(&ks[nks].gpu, samples, n);
          nks++;
        }
        free(samples);
        free(mark);
      }
      if (!ma.json && ctx->verbose >= 0) {
        compile_report(m, mj, ma.cache != NULL, load_ms, first_ms);
        print_compile(mj, phases);
      }
      for (size_t i = 0; i < nks; i++) {
        cJSON *kj = cJSON_CreateObject();
        gpujit_kernel_attrs at;
        double be = ks[i].gpu.median > 0 ? compile_cost / ks[i].gpu.median : 0;
        gpujit_kernel_attrs_get(r.launches[i].k, &at);
        cJSON_AddStringToObject(kj, "kernel", ks[i].name);
        if (r.launches[i].expr[0])
          cJSON_AddStringToObject(kj, "name_expression", r.launches[i].expr);
        cJSON_AddItemToObject(kj, "gpu_ms", stats_json(&ks[i].gpu));
        cJSON_AddNumberToObject(kj, "host_launch_us", ks[i].launch_us);
        cJSON_AddNumberToObject(kj, "registers", at.registers);
        cJSON_AddNumberToObject(kj, "break_even_launches", be);
        cJSON_AddItemToArray(karr, kj);
        if (!ma.json && ctx->verbose >= 0) {
          printf("kernel %s%s%s%s  grid %u,%u,%u  block %u,%u,%u  %d regs  (%zu timed launches)\n", ks[i].name,
                 r.launches[i].expr[0] ? " (" : "", r.launches[i].expr, r.launches[i].expr[0] ? ")" : "",
                 r.launches[i].grid[0], r.launches[i].grid[1], r.launches[i].grid[2], r.launches[i].block[0],
                 r.launches[i].block[1], r.launches[i].block[2], at.registers, ks[i].n);
          printf("  GPU ms  min %.6f  median %.6f  mean %.6f  max %.6f  stdev %.6f  noise %.2f%%\n", ks[i].gpu.min,
                 ks[i].gpu.median, ks[i].gpu.mean, ks[i].gpu.max, ks[i].gpu.stdev, ks[i].gpu.noise * 100);
          printf("  host launch overhead  %.2f us\n", ks[i].launch_us);
          printf("  break-even  %.0f launches (compile %.1f ms / %.6f ms per launch)\n", be, compile_cost,
                 ks[i].gpu.median);
        }
      }
    }
  }
  /* Copy back what was asked for. */
  {
    cJSON *barr = cJSON_AddArrayToObject(out, "buffers");
    for (size_t i = 0; i < r.nbuffers; i++) {
      buffer *b = &r.buffers[i];
      void *host;
      double sum;
      char hex[17];
      if (!b->spec->out_checksum && !b->spec->out_file[0])
        continue;
      if (!(host = malloc(b->bytes)) || (err = gpujit_memcpy_dtoh(r.dev, host, b->ptr, b->bytes)) < 0) {
        free(host);
        rc = host ? cli_fail(ctx, err) : EXIT_FAILURE_;
        goto done;
      }
      checksum(b, host, &sum, hex);
      if (b->spec->out_file[0]) {
        FILE *f = fopen(b->spec->out_file, "wb");
        if (!f || fwrite(host, 1, b->bytes, f) != b->bytes) {
          fprintf(stderr, "%s: error: cannot write %s: %s\n", ctx->prog, b->spec->out_file, strerror(errno));
          if (f)
            fclose(f);
          free(host);
          rc = EXIT_IO;
          goto done;
        }
        fclose(f);
      }
      free(host);
      {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", b->spec->name[0] ? b->spec->name : "");
        cJSON_AddNumberToObject(o, "count", (double)b->spec->count);
        cJSON_AddNumberToObject(o, "sum", sum);
        cJSON_AddStringToObject(o, "fnv1a64", hex);
        if (b->spec->out_file[0])
          cJSON_AddStringToObject(o, "file", b->spec->out_file);
        cJSON_AddItemToArray(barr, o);
      }
      if (!ma.json && ctx->verbose >= 0)
        printf("buffer %s  %llu elements  sum %.9g  fnv1a64 %s%s%s\n", b->spec->name[0] ? b->spec->name : "(unnamed)",
               (unsigned long long)b->spec->count, sum, hex, b->spec->out_file[0] ? "  -> " : "", b->spec->out_file);
    }
  }
  if (!bench) {
    if ((err = gpujit_timing_end(&res, &nres, r.dev)) < 0) {
      rc = cli_fail(ctx, err);
      goto done;
    }
    trace_results(ma.trace, res, nres, res && nres ? res[0].device : 0);
    if (gpujit_timing_dropped(r.dev)) { /* CUPTI said it lost records: the tables lack them */
      cJSON_AddNumberToObject(out, "cupti_dropped", (double)gpujit_timing_dropped(r.dev));
      cli_warn(ctx, "CUPTI dropped %llu activity records", (unsigned long long)gpujit_timing_dropped(r.dev));
    }
    if (timeline && !ma.json) {
      char *text = NULL;
      if (gpujit_timing_format(&text, res, nres, GPUJIT_REPORT_ALL) == 0)
        printf("%s", text);
      gpujit_free(text);
    }
  }
  if (ma.json) {
    int jrc;
    compile_report(m, mj, ma.cache != NULL, load_ms, first_ms);
    jrc = cli_json_emit(ctx, out, "gpujit-run", ma.json_file), out = NULL;
    rc = rc == EXIT_OK ? jrc : rc;
  }
  if (ma.want_trace) {
    char path[4200];
    if (ma.trace_arg)
      snprintf(path, sizeof(path), "%s", ma.trace_arg);
    else
      snprintf(path, sizeof(path), "%s.trace.json", gpujit_module_name(m));
    gpujit_trace_set_meta(ma.trace, "module", gpujit_module_name(m));
    if ((err = gpujit_trace_write(ma.trace, path)) < 0) {
      rc = cli_fail(ctx, err);
      goto done;
    }
    if (!ma.json && ctx->verbose >= 0)
      printf("trace %s\n", path);
  }
done:
  if (timer)
    gpujit_timer_stop(timer, NULL);
  free(res);
  for (size_t i = 0; i < r.nbuffers; i++)
    if (r.buffers[i].ptr)
      gpujit_mem_free(r.dev, r.buffers[i].ptr);
  gpujit_loaded_free(loaded);
  gpujit_device_free(r.dev);
  gpujit_module_free(m);
  cli_module_args_free(&ma);
  cJSON_Delete(out);
  return rc;
}
