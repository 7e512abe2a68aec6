/* `gpujit profile -- COMMAND`: JIT compile against execute for any CUDA program, unchanged. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void profile_help(void)
{
  printf("usage: gpujit profile [options] -- COMMAND [ARGS...]\n\n"
         "Run COMMAND as it is, with gpujit's injection library inside it and its children, and report\n"
         "what JIT compiling cost against what executing cost: every NVRTC compile, nvJitLink link and\n"
         "libNVVM compile (also those a framework resolves with dlopen + dlsym), every module load with\n"
         "the driver's JIT, every kernel, copy and memset (CUPTI), per module. The exit status is\n"
         "COMMAND's (128 + N when signal N ended it). The table goes to stderr when it ends.\n\n"
         "options:\n"
         "  -o FILE          write the table to FILE instead of stderr\n"
         "  --json FILE      write the whole profile as JSON\n"
         "  --trace FILE     write a trace (Perfetto, chrome://tracing, gpujit trace analyze/diff)\n"
         "  --lineinfo       add -lineinfo to NVRTC compiles that lack it (changes the compiles:\n"
         "                   Nsight Compute source correlation for any framework's kernels)\n"
         "  --nvrtc-trace    add --fdevice-time-trace to NVRTC compiles; their phases, headers and\n"
         "                   templates go into --trace (changes the compiles)\n"
         "  --no-cupti       leave CUPTI to the program: PyTorch's profiler (its CUPTI is linked into\n"
         "                   libtorch) or another CUPTI tool inside COMMAND; compiles and module loads\n"
         "                   are still recorded, kernels, copies and the driver's JIT are not\n"
         "  --max-events N   kernels, copies and memsets kept for the trace per process (default\n"
         "                   200000; past it they are counted, not drawn)\n"
         "  --keep DIR       keep the raw records (JSON lines per process) in DIR\n"
         "  --top N          module rows in the table (default 20; 0 for all)\n"
         "  -q, --quiet      no table (unless -o)\n"
         "  -h, --help       this help\n");
}

static void ms_cell(FILE *f, double v)
{
  if (v > 0)
    fprintf(f, " %10.1f", v);
  else
    fprintf(f, " %10s", "");
}

static void table(FILE *f, char **cmd, const gpujit_profile *p, long top)
{
  gpujit_profile_totals t;
  const gpujit_profile_module *m;
  const gpujit_profile_device *d;
  size_t nm = gpujit_profile_modules(p, &m), nd = gpujit_profile_devices(p, &d);
  const char *notes = gpujit_profile_notes(p);
  gpujit_profile_totals_get(p, &t);
  {
    char line[100];
    size_t n = 0;
    for (int i = 0; cmd[i] && n < sizeof(line) - 1; i++) {
      if (i)
        line[n++] = ' ';
      for (const char *c = cmd[i]; *c && n < sizeof(line) - 1; c++)
        line[n++] = (*c == '\n' || *c == '\t') ? ' ' : *c;
    }
    line[n] = '\0';
    fprintf(f, "\ngpujit profile: %s%s\n", line, n >= sizeof(line) - 1 ? " ..." : "");
  }
  if (t.signal)
    fprintf(f, "  ended by signal %d", t.signal);
  else
    fprintf(f, "  exit %d", t.exit_status);
  fprintf(f, ", wall %.1f ms, %llu process%s%s\n", t.wall_ms, (unsigned long long)t.processes,
          t.processes == 1 ? "" : "es", t.partial ? " (PARTIAL: a process did not end normally; what it recorded is here)" : "");
  fprintf(f, "  JIT compile %.1f ms in %llu compile%s", t.compile_ms, (unsigned long long)t.compiles,
          t.compiles == 1 ? "" : "s");
  if (t.failed)
    fprintf(f, " (%llu failed)", (unsigned long long)t.failed);
  if (t.repeats)
    fprintf(f, "; %llu identical repeat%s: %.1f ms a persistent cache would save", (unsigned long long)t.repeats,
            t.repeats == 1 ? "" : "s", t.repeat_ms);
  fprintf(f, "\n");
  if (t.link_ms > 0)
    fprintf(f, "  nvJitLink %.1f ms\n", t.link_ms);
  if (t.gpu_recorded) {
    fprintf(f, "  module load %.1f ms in %llu load%s (driver JIT %.1f ms)\n", t.load_ms, (unsigned long long)t.loads,
            t.loads == 1 ? "" : "s", t.jit_ms);
    for (size_t i = 0; i < nd; i++)
      fprintf(f, "  GPU %u: %llu launches %.3f ms, %llu copies %.3f ms, %llu memsets %.3f ms\n", d[i].device,
              (unsigned long long)d[i].launches, d[i].kernel_ms, (unsigned long long)d[i].copies, d[i].copy_ms,
              (unsigned long long)d[i].memsets, d[i].memset_ms);
    if (!nd)
      fprintf(f, "  GPU: nothing ran\n");
  } else {
    fprintf(f, "  GPU: not recorded (no CUDA context, or CUPTI unavailable: see the notes)\n");
  }
  if (nm) {
    fprintf(f, "\n  %-40s %-17s %8s %4s %10s %10s %8s %9s %10s %10s\n", "module", "origin", "compiles", "rep",
            "compile ms", "load ms", "kernels", "launches", "GPU ms", "break-even");
    for (size_t i = 0; i < nm && (top <= 0 || (long)i < top); i++) {
      char label[200];
      if (m[i].kernel[0] && strcmp(m[i].kernel, m[i].name))
        snprintf(label, sizeof(label), "%s (%s)", m[i].kernel, m[i].name);
      else
        snprintf(label, sizeof(label), "%s", m[i].name);
      fprintf(f, "  %-40.40s %-17.17s %8llu %4llu", label, m[i].origin, (unsigned long long)m[i].compiles,
              (unsigned long long)m[i].repeats);
      ms_cell(f, m[i].compile_ms);
      ms_cell(f, m[i].load_ms);
      fprintf(f, " %8llu %9llu", (unsigned long long)m[i].kernels, (unsigned long long)m[i].launches);
      if (m[i].gpu_ms > 0)
        fprintf(f, " %10.3f", m[i].gpu_ms);
      else
        fprintf(f, " %10s", "");
      if (m[i].break_even > 0)
        fprintf(f, " %10.0f\n", m[i].break_even);
      else
        fprintf(f, " %10s\n", "");
    }
    if (top > 0 && nm > (size_t)top)
      fprintf(f, "  ... %zu more (--top 0 for all)\n", nm - (size_t)top);
  }
  if (t.untraced)
    fprintf(f, "  %llu launches, copies and memsets past the trace budget: in the totals, not drawn\n",
            (unsigned long long)t.untraced);
  if (t.lost)
    fprintf(f, "  %llu records could not be kept (bounded tables or CUPTI's buffers): the totals miss them\n",
            (unsigned long long)t.lost);
  for (const char *n = notes; *n;) {
    size_t len = strcspn(n, "\n");
    fprintf(f, "  note: %.*s\n", (int)len, n);
    n += len + (n[len] == '\n');
  }
}

static int write_text(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0) {
    if (f)
      fclose(f);
    return -1;
  }
  return fclose(f);
}

int cmd_profile(cli_ctx *ctx, int argc, char **argv)
{
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  cli_args a = {argc, 1, argv, "profile", NULL, false};
  const char *out = NULL, *json = NULL, *trace = NULL;
  gpujit_profile *p = NULL;
  gpujit_profile_totals t;
  long top = 20, n;
  int err, cmd = -1;
  for (; a.i < argc; a.i++) {
    if (!strcmp(argv[a.i], "--")) {
      cmd = a.i + 1;
      break;
    }
    if (!strcmp(argv[a.i], "-h") || !strcmp(argv[a.i], "--help")) {
      profile_help();
      return EXIT_OK;
    } else if (cli_opt(&a, "-o", true))
      out = a.value;
    else if (cli_opt(&a, "--json", true))
      json = a.value;
    else if (cli_opt(&a, "--trace", true))
      trace = a.value;
    else if (cli_opt(&a, "-q", false) || cli_opt(&a, "--quiet", false))
      ctx->verbose = -1;
    else if (cli_opt(&a, "--lineinfo", false))
      o.lineinfo = 1;
    else if (cli_opt(&a, "--nvrtc-trace", false))
      o.nvrtc_trace = 1;
    else if (cli_opt(&a, "--no-cupti", false))
      o.no_cupti = 1;
    else if (cli_opt(&a, "--keep", true))
      o.records_dir = a.value;
    else if (cli_opt(&a, "--max-events", true)) {
      if (!cli_parse_int(a.value, 1, 1000000000L, &n))
        return cli_usage_error(ctx, "profile", "--max-events wants a count from 1, not '%s'", a.value);
      o.max_trace_events = (uint64_t)n;
    } else if (cli_opt(&a, "--top", true)) {
      if (!cli_parse_int(a.value, 0, 1000000L, &top))
        return cli_usage_error(ctx, "profile", "--top wants a count, not '%s'", a.value);
    } else if (a.failed)
      return EXIT_USAGE;
    else if (argv[a.i][0] == '-')
      return cli_usage_error(ctx, "profile", "unknown option '%s' (the command goes after --)", argv[a.i]);
    else {
      cmd = a.i; /* the command without "--" */
      break;
    }
  }
  if (a.failed)
    return EXIT_USAGE;
  if (cmd < 0 || cmd >= argc)
    return cli_usage_error(ctx, "profile", "no command to run: gpujit profile [options] -- COMMAND [ARGS...]");
  if ((err = gpujit_profile_run(&p, argv + cmd, &o)) < 0)
    return cli_fail(ctx, err);
  gpujit_profile_totals_get(p, &t);
  if (json) {
    char *text = NULL;
    if ((err = gpujit_profile_json(p, &text)) < 0 || write_text(json, text) != 0) {
      free(text);
      if (err == 0)
        cli_warn(ctx, "cannot write %s", json);
      else
        cli_fail(ctx, err);
    } else
      free(text);
  }
  if (trace && (err = gpujit_profile_trace(p, trace)) < 0)
    cli_fail(ctx, err);
  if (ctx->verbose >= 0 || out) {
    FILE *f = out ? fopen(out, "w") : stderr;
    if (!f)
      cli_warn(ctx, "cannot write %s", out);
    else {
      table(f, argv + cmd, p, top);
      if (out)
        fclose(f);
    }
  }
  gpujit_profile_free(p);
  return t.exit_status; /* the command's, whatever gpujit wrote */
}
