/* gpujit's entry point: global flags, the subcommand table, --help and --version. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int cmd_help(cli_ctx *ctx, int argc, char **argv);
static int cmd_version(cli_ctx *ctx, int argc, char **argv);

static const cli_command commands[] = {
    {"build", cmd_build, "compile CUDA C modules with NVRTC (and nvJitLink)"},
    {"run", cmd_run, "build, load and run kernels; report compile against execute cost"},
    {"cache", cmd_cache, "the kernel cache: path, ls, show, source, stats, zero, limit, clear, prune, verify, export,\n"
                         "             import"},
    {"ncu", cmd_ncu, "Nsight Compute helpers (ncu hotspots: per-line table from --page source CSV)"},
    {"trace", cmd_trace, "analyze and compare compile-time traces (trace analyze, trace diff)"},
    {"server", cmd_server, "a warm build server: NVRTC and precompiled headers kept between calls (start, stop, status)"},
    {"profile", cmd_profile, "run any CUDA program and report its JIT compiles and module loads against its GPU time"},
    {"env", cmd_env, "every environment setting gpujit reads, what it does, its value in effect and from where"},
    {"version", cmd_version, "gpujit's version; the toolkit, NVRTC, nvJitLink, ptxas, CUPTI, driver and cache it uses"},
    {"help", cmd_help, "show this help"},
};

static void print_help(cli_ctx *ctx)
{
  printf("usage: %s [-q|-v] <command> [options]\n\n"
         "gpujit compiles CUDA C with NVRTC, links with nvJitLink, traces and caches the results.\n\n"
         "commands:\n", ctx->prog);
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    printf("  %-10s %s\n", commands[i].name, commands[i].summary);
  printf("\nglobal options:\n"
         "  -q, --quiet     print errors only\n"
         "  -v, --verbose   print more (NVRTC logs, library messages)\n"
         "  --version       same as 'gpujit version'\n"
         "  -h, --help      this help; '%s <command> --help' for a command's options\n"
         "Short flags combine (-qv), '--' ends the options, --json[=FILE] prints (or writes) one\n"
         "versioned JSON document (docs/json.md); 'gpujit env' lists every setting, 'man gpujit'.\n\n"
         "exit codes:\n"
         "  0  success\n"
         "  1  internal error (out of memory, unexpected failure)\n"
         "  2  usage error (unknown flag, bad option value such as --arch)\n"
         "  3  compile or link error (diagnostics on stderr)\n"
         "  4  I/O error (missing or unreadable file, cannot write output)\n"
         "  5  bad input data (empty or binary source, malformed trace JSON)\n"
         "  6  CUDA driver or device unavailable\n"
         "  7  CUDA error while running\n"
         "  8  trace diff: compile time regressed past --fail-above\n"
         "  9  no CUDA toolkit: set CUDA_PATH, or pip install 'gpujit[cu13]' (gpujit --version says\n"
         "     which it would use)\n\n"
         "environment:\n"
         "  GPUJIT_ARCH       default target arch (else the GPU's, else %s)\n"
         "  GPUJIT_CACHE_DIR  kernel cache (else $XDG_CACHE_HOME/gpujit, else ~/.cache/gpujit)\n"
         "  GPUJIT_NO_CACHE   1: bypass the cache\n"
         "  GPUJIT_BASE_DIR   paths under it enter cache keys relative to it\n"
         "  GPUJIT_SERVER     1: start a build server on demand; 0: never use one\n"
         "  NO_COLOR          disable colour\n"
         "  (and more: gpujit env)\n", ctx->prog, GPUJIT_DEFAULT_ARCH);
}

/* The exit codes of print_help, for `gpujit help --json`. */
static const char *const exit_codes[] = {
    "success", "internal error", "usage error", "compile or link error", "I/O error", "bad input data",
    "CUDA driver or device unavailable", "CUDA error while running", "trace diff: compile time regressed",
    "no CUDA toolkit"};

static int help_json(cli_ctx *ctx, const char *file)
{
  cJSON *o = cJSON_CreateObject(), *cmds = cJSON_AddArrayToObject(o, "commands"),
        *codes = cJSON_AddObjectToObject(o, "exit_codes");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", commands[i].name);
    cJSON_AddStringToObject(c, "summary", commands[i].summary);
    cJSON_AddItemToArray(cmds, c);
  }
  for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++) {
    char k[8];
    snprintf(k, sizeof(k), "%zu", i);
    cJSON_AddStringToObject(codes, k, exit_codes[i]);
  }
  return cli_json_emit(ctx, o, "gpujit-help", file);
}

static int cmd_help(cli_ctx *ctx, int argc, char **argv)
{
  bool json = false;
  const char *file = NULL;
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "help"};
  for (; a.i < argc; a.i++) {
    if (cli_json_opt(&a, &json, &file))
      continue;
    if (cli_is_option(&a))
      return cli_unknown_option(ctx, &a, "help");
    for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
      if (!strcmp(argv[a.i], commands[k].name) && commands[k].fn != cmd_help) { /* `gpujit help cache` */
        char *v[] = {argv[a.i], "--help", NULL};
        return commands[k].fn(ctx, 2, v);
      }
    return cli_usage_error(ctx, "help", "unknown command '%s'", argv[a.i]);
  }
  if (json)
    return help_json(ctx, file);
  print_help(ctx);
  return EXIT_OK;
}

static int cmd_version(cli_ctx *ctx, int argc, char **argv)
{
  static char *none[] = {"version", NULL};
  return cli_version(ctx, argv ? argc : 1, argv ? argv : none); /* cmd_env.c */
}

/* Killed while ptxas runs: end it and remove its temporary files, then die of the signal as we
 * would have (it is raised again once the handler returns: the handler blocks it meanwhile). */
static void on_fatal_signal(int sig)
{
  gpujit_children_abort();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void catch_fatal_signals(void)
{
  static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
    struct sigaction sa, old;
    /* a signal ignored by whoever started us (nohup, a background job) stays ignored */
    if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
      continue;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fatal_signal;
    sigaction(sigs[i], &sa, NULL);
  }
}

int main(int argc, char **argv)
{
  cli_ctx ctx = {0, false, "gpujit"};
  const char *nc = getenv("NO_COLOR");
  int i = 1;

  catch_fatal_signals();
  ctx.color = isatty(STDERR_FILENO) && !(nc && *nc);
  if (!(argv = cli_split_short_flags(&argc, argv, true))) /* -qv before the command */
    return cli_fail(&ctx, GPUJIT_ENOMEM);
  for (; i < argc && argv[i][0] == '-'; i++) {
    static const char *const names[] = {"-q", "--quiet", "-v", "--verbose", "--version", "-h", "--help"};
    const char *near;
    if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
      ctx.verbose = -1;
    else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
      ctx.verbose = 1;
    else if (!strcmp(argv[i], "--version"))
      return cmd_version(&ctx, 0, NULL);
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
      return cmd_help(&ctx, 0, NULL);
    else if (!strcmp(argv[i], "--")) {
      i++;
      break;
    } else if (strlen(argv[i]) > 3 && (near = cli_nearest(argv[i], names, sizeof(names) / sizeof(names[0]))))
      return cli_usage_error(&ctx, NULL, "unknown option '%s' (did you mean '%s'?)", argv[i], near);
    else
      return cli_usage_error(&ctx, NULL, "unknown option '%s'", argv[i]);
  }
  cli_set_verbosity(&ctx, ctx.verbose);
  if (i >= argc) {
    print_help(&ctx);
    return EXIT_USAGE;
  }
  for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
    if (!strcmp(argv[i], commands[k].name)) {
      int n = argc - i;
      /* -qv after the command too; profile's own command after its options is left alone */
      char **v = cli_split_short_flags(&n, argv + i, commands[k].fn == cmd_profile);
      if (!v)
        return cli_fail(&ctx, GPUJIT_ENOMEM);
      return commands[k].fn(&ctx, n, v);
    }
  { /* the nearest command, where one is near (two edits or fewer) */
    const char *names[sizeof(commands) / sizeof(commands[0])];
    const char *near;
    for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
      names[k] = commands[k].name;
    if ((near = cli_nearest(argv[i], names, sizeof(names) / sizeof(names[0]))) != NULL)
      return cli_usage_error(&ctx, NULL, "unknown command '%s' (did you mean '%s'?)", argv[i], near);
  }
  return cli_usage_error(&ctx, NULL, "unknown command '%s'", argv[i]);
}
