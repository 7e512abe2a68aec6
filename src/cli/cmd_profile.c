/* `gpujit profile -- COMMAND`: JIT compile against execute for any CUDA program, unchanged. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static void profile_help(void)
{
  printf("usage: gpujit profile [options] -- COMMAND [ARGS...]\n\n"
         "Run COMMAND as it is, with gpujit's injection library inside it and its children, and report\n"
         "what JIT compiling cost against what executing cost: every NVRTC compile, nvJitLink link and\n"
         "libNVVM compile (also those a framework resolves with dlopen + dlsym), every toolchain process\n"
         "(ptxas, nvlink, nvcc, the C compilers), the compiles of Python frameworks (JAX/XLA, Triton,\n"
         "torch.compile, Warp, Numba-CUDA, Taichi) through a start-up hook in every Python process,\n"
         "every module load with the driver's JIT, every kernel, copy and memset (CUPTI), per module.\n"
         "The exit status is COMMAND's (128 + N when signal N ended it). The table goes to stderr\n"
         "when it ends.\n\n"
         "options:\n"
         "  -o FILE          write the table to FILE instead of stderr\n"
         "  --json[=FILE]    the whole profile as JSON (docs/json.md): on stdout when COMMAND ends\n"
         "                   (no table then, unless -o), or written to FILE (--json FILE.json too)\n"
         "  --trace FILE     write a trace (Perfetto, chrome://tracing, gpujit trace analyze/diff)\n"
         "  --lineinfo       add -lineinfo to NVRTC compiles that lack it (changes the compiles:\n"
         "                   Nsight Compute source correlation for any framework's kernels)\n"
         "  --nvrtc-trace    add --fdevice-time-trace to NVRTC compiles; their phases, headers and\n"
         "                   templates go into --trace (changes the compiles)\n"
         "  --no-cupti       leave CUPTI to the program: PyTorch's profiler (its CUPTI is linked into\n"
         "                   libtorch) or another CUPTI tool inside COMMAND; compiles and module loads\n"
         "                   are still recorded, kernels, copies and the driver's JIT are not\n"
         "  --no-frameworks  no Python start-up hook: the frameworks' compiles are not recorded as\n"
         "                   theirs (their ptxas processes and NVRTC/NVVM compiles still are)\n"
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

/* An option's file, never the "--" that starts the command (`--json -- cmd`). */
static const char *file_value(cli_ctx *ctx, cli_args *a, const char *name)
{
  if (a->failed || !a->value || !strcmp(a->value, "--") || !a->value[0]) {
    cli_usage_error(ctx, "profile", "option '%s' needs a value (a file, before '--')", name);
    a->failed = false;
    return NULL;
  }
  return a->value;
}

/* 0 when `cmd` can be run; else 127 (not found) or 126 (found, not runnable), as sh says. */
static int runnable(const char *cmd)
{
  struct stat st;
  const char *path = getenv("PATH");
  char cand[4096];
  int found = 127;
  if (strchr(cmd, '/'))
    return stat(cmd, &st) != 0 ? 127 : S_ISREG(st.st_mode) && access(cmd, X_OK) == 0 ? 0 : 126;
  for (const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; p;) {
    const char *colon = strchr(p, ':');
    int n = colon ? (int)(colon - p) : (int)strlen(p);
    snprintf(cand, sizeof(cand), "%.*s/%s", n ? n : 1, n ? p : ".", cmd);
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
      if (access(cand, X_OK) == 0)
        return 0;
      found = 126;
    }
    p = colon ? colon + 1 : NULL;
  }
  return found;
}

int cmd_profile(cli_ctx *ctx, int argc, char **argv)
{
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "profile"};
  const char *out = NULL, *json = NULL, *trace = NULL;
  bool json_out = false; /* --json: the profile's JSON on stdout when COMMAND ends */
  gpujit_profile *p = NULL;
  gpujit_profile_totals t;
  long top = 20, n;
  int err, cmd = -1;
  const char *failed = NULL;
  for (; a.i < argc; a.i++) {
    if (!strcmp(argv[a.i], "--")) {
      cmd = a.i + 1;
      break;
    }
    if (!strcmp(argv[a.i], "-h") || !strcmp(argv[a.i], "--help")) {
      profile_help();
      return EXIT_OK;
    } else if (cli_opt(&a, "-o", true)) {
      if (!(out = file_value(ctx, &a, "-o")))
        return EXIT_USAGE;
    } else if (cli_json_opt(&a, &json_out, &json)) {
      const char *next = a.i + 1 < argc ? argv[a.i + 1] : NULL;
      size_t len = next ? strlen(next) : 0;
      bool dashes = false; /* a "--" further on: what comes before it is options and their values */
      for (int k = a.i + 2; k < argc && !dashes; k++)
        dashes = !strcmp(argv[k], "--");
      /* `--json FILE` as before: a FILE.json (a command is never named so), or a word before "--" */
      if (!json && next && next[0] != '-' && (dashes || (len > 5 && !strcmp(next + len - 5, ".json"))))
        json = argv[++a.i];
      if (json && !*json)
        return cli_usage_error(ctx, "profile", "--json= needs a file name");
    } else if (cli_opt(&a, "--trace", true)) {
      if (!(trace = file_value(ctx, &a, "--trace")))
        return EXIT_USAGE;
    }
    else if (cli_opt(&a, "-q", false) || cli_opt(&a, "--quiet", false))
      ctx->verbose = -1;
    else if (cli_opt(&a, "--lineinfo", false))
      o.lineinfo = 1;
    else if (cli_opt(&a, "--nvrtc-trace", false))
      o.nvrtc_trace = 1;
    else if (cli_opt(&a, "--no-cupti", false))
      o.no_cupti = 1;
    else if (cli_opt(&a, "--no-frameworks", false))
      o.no_frameworks = 1;
    else if (cli_opt(&a, "--keep", true)) {
      struct stat st;
      if (!(o.records_dir = file_value(ctx, &a, "--keep")))
        return EXIT_USAGE;
      if (stat(o.records_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return cli_usage_error(ctx, "profile", "--keep %s: not a directory", o.records_dir);
    }
    else if (cli_opt(&a, "--max-events", true)) {
      if (!cli_parse_int(a.value, 1, 1000000000L, &n))
        return cli_usage_error(ctx, "profile", "--max-events wants a count from 1, not '%s'", a.value);
      o.max_trace_events = (uint64_t)n;
    } else if (cli_opt(&a, "--top", true)) {
      if (!cli_parse_int(a.value, 0, 1000000L, &top))
        return cli_usage_error(ctx, "profile", "--top wants a count, not '%s'", a.value);
    } else if (a.failed)
      return cli_usage_error(ctx, "profile", "option '%s' needs a value", argv[a.i]);
    else if (argv[a.i][0] == '-')
      return cli_unknown_option(ctx, &a, "profile");
    else {
      cmd = a.i; /* the command without "--" */
      break;
    }
  }
  if (a.failed)
    return cli_usage_error(ctx, "profile", "option '%s' needs a value", argv[a.i]);
  if (cmd < 0 || cmd >= argc)
    return cli_usage_error(ctx, "profile", "no command to run: gpujit profile [options] -- COMMAND [ARGS...]");
  if ((err = runnable(argv[cmd])) != 0) { /* as a shell says it: 127 not found, 126 not runnable */
    fprintf(stderr, "%s: profile: %s: %s\n", ctx->prog, argv[cmd],
            err == 127 ? "command not found" : "cannot run it (not an executable file)");
    return err;
  }
  if ((err = gpujit_profile_run(&p, argv + cmd, &o)) < 0)
    return cli_fail(ctx, err);
  gpujit_profile_totals_get(p, &t);
  errno = 0;
  if (json_out) {
    char *text = NULL;
    if ((err = gpujit_profile_json(p, &text)) < 0 ||
        (json ? write_text(json, text) != 0 : (printf("%s\n", text) < 0 || fflush(stdout) != 0)))
      failed = failed ? failed : json ? json : "the JSON";
    free(text);
  }
  if (trace && gpujit_profile_trace(p, trace) < 0)
    failed = failed ? failed : trace;
  if ((ctx->verbose >= 0 && !(json_out && !json)) || out) { /* --json on stdout: the JSON alone */
    FILE *f = out ? fopen(out, "w") : stderr;
    char title[120], *text = NULL;
    size_t len = 0;
    for (int i = cmd; argv[i] && len < 100; i++) { /* the command, on one line */
      if (i > cmd)
        title[len++] = ' ';
      for (const char *c = argv[i]; *c && len < 100; c++)
        title[len++] = (*c == '\n' || *c == '\t') ? ' ' : *c;
    }
    snprintf(title + len, sizeof(title) - len, "%s", len >= 100 ? " ..." : "");
    if (!f || gpujit_profile_format(p, title, top, &text) < 0 || fputs(text, f) < 0)
      failed = failed ? failed : out ? out : "the report";
    free(text);
    if (out && f && fclose(f) != 0)
      failed = failed ? failed : out;
  }
  /* The command ran and its status is known: a report that could not be written still fails
   * (even with -q), and says what the command did. */
  if (failed) {
    fprintf(stderr, "%s: profile: cannot write %s (%s); the command exited with status %d\n", ctx->prog, failed,
            errno ? strerror(errno) : "write failed", t.exit_status);
    gpujit_profile_free(p);
    return EXIT_IO;
  }
  gpujit_profile_free(p);
  return t.exit_status; /* the command's, whatever gpujit wrote */
}
