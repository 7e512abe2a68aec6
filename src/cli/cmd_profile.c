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
      char title[120], *text = NULL;
      size_t len = 0;
      for (int i = cmd; argv[i] && len < 100; i++) { /* the command, on one line */
        if (i > cmd)
          title[len++] = ' ';
        for (const char *c = argv[i]; *c && len < 100; c++)
          title[len++] = (*c == '\n' || *c == '\t') ? ' ' : *c;
      }
      snprintf(title + len, sizeof(title) - len, "%s", len >= 100 ? " ..." : "");
      if ((err = gpujit_profile_format(p, title, top, &text)) < 0)
        cli_fail(ctx, err);
      else
        fputs(text, f);
      free(text);
      if (out)
        fclose(f);
    }
  }
  gpujit_profile_free(p);
  return t.exit_status; /* the command's, whatever gpujit wrote */
}
