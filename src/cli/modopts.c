/* Options shared by `gpujit build` and `gpujit run`: compile flags, cache, trace. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *const cli_module_help =
    "  --arch ARCH          sm_XX (cubin) or compute_XX (PTX); default: $GPUJIT_ARCH, else\n"
    "                       the GPU's, else " GPUJIT_DEFAULT_ARCH "\n"
    "  -I DIR               add an include directory (the source's own is always searched)\n"
    "  -D NAME[=VALUE]      define a macro\n"
    "  -U NAME              undefine a macro\n"
    "  --regions            switch on timed regions in kernels: defines GPUJIT_REGIONS for\n"
    "                       #include <gpujit/regions.cuh> (docs/regions.md)\n"
    "  --std STD            c++03, c++11, c++14, c++17 or c++20\n"
    "  --no-lineinfo        do not emit line info (on by default)\n"
    "  --no-line-directives join a library prelude into the source text instead of\n"
    "                       pre-including it (lines then shift)\n"
    "  --no-pch             never create or use NVRTC precompiled headers\n"
    "  --no-lean            keep NVRTC's image whole (default: module-scope variables\n"
    "                       nothing uses are removed from the PTX before ptxas)\n"
    "  --pch                create a precompiled header on the first module of an include\n"
    "                       block (default: where a later module of the process can use it)\n"
    "  -G                   device debug info\n"
    "  --fast-math          --use_fast_math\n"
    "  --maxrregcount N     limit registers per thread (16..255)\n"
    "  --Ofast-compile L    0, min, mid or max\n"
    "  --name-expr EXPR     a name expression to lower, e.g. 'scale<float>' (repeatable)\n"
    "  -Xnvrtc OPT          pass OPT to NVRTC verbatim (repeatable)\n"
    "  --cache-dir DIR      kernel cache (default: $GPUJIT_CACHE_DIR, $XDG_CACHE_HOME/gpujit,\n"
    "                       ~/.cache/gpujit)\n"
    "  --no-cache           bypass the cache (also GPUJIT_NO_CACHE=1)\n"
    "  --base-dir DIR       paths under DIR enter cache keys relative to it (GPUJIT_BASE_DIR)\n"
    "  --remote-cache URL   remote stores under the cache, tried in order (repeatable;\n"
    "                       GPUJIT_REMOTE_CACHE): http(s)://HOST/PATH or redis://HOST:PORT/DB,\n"
    "                       with |layout=bazel, |timeout=MS, … (docs/cache-in-ci.md)\n"
    "  --remote-read-only   only read the remote stores (GPUJIT_REMOTE_READ_ONLY=1)\n"
    "  --time-trace[=FILE]  write a compile-time trace (opens in ui.perfetto.dev); --time-trace\n"
    "                       FILE.json also names it\n"
    "  --json[=FILE]        print the result as JSON (docs/json.md), or write it to FILE\n"
    "  -q, -v               quiet (errors only) or verbose (logs)\n";

void cli_module_args_init(cli_module_args *m)
{
  const char *env = getenv("GPUJIT_NO_CACHE");
  gpujit_module_options init = GPUJIT_MODULE_OPTIONS_INIT;
  memset(m, 0, sizeof(*m));
  m->opts = init;
  m->no_cache = env && *env && strcmp(env, "0") != 0;
}

static bool push(cli_list *l, const char *s)
{
  if (l->count == CLI_MAX_LIST)
    return false;
  l->items[l->count++] = s;
  return true;
}

/* An option that shapes the compile (what enters the request key). 1: it was one (*ok false when
 * its list is full); 0: not one; negative: -(exit code). */
static int compile_opt(cli_ctx *ctx, cli_args *a, cli_module_args *m, bool *ok)
{
  long n;
  if (cli_opt(a, "--arch", true)) {
    m->opts.arch = a->value;
  } else if (cli_opt(a, "-I", true)) {
    *ok = push(&m->incs, a->value);
  } else if (cli_opt(a, "-D", true)) {
    *ok = push(&m->defs, a->value);
  } else if (cli_opt(a, "--regions", false)) {
    *ok = push(&m->defs, "GPUJIT_REGIONS");
  } else if (cli_opt(a, "-U", true)) {
    *ok = push(&m->undefs, a->value);
  } else if (cli_opt(a, "--std", true)) {
    m->opts.std = a->value;
  } else if (cli_opt(a, "--no-lineinfo", false)) {
    m->opts.lineinfo = 0;
  } else if (cli_opt(a, "--no-line-directives", false)) {
    m->opts.line_directives = 0;
  } else if (cli_opt(a, "--no-pch", false)) {
    m->opts.pch = GPUJIT_PCH_OFF;
  } else if (cli_opt(a, "--no-lean", false)) {
    m->opts.lean = 0;
  } else if (cli_opt(a, "--pch", false)) {
    m->opts.pch = GPUJIT_PCH_ON;
  } else if (cli_opt(a, "-G", false)) {
    m->opts.device_debug = 1;
  } else if (cli_opt(a, "--fast-math", false)) {
    m->opts.fast_math = 1;
  } else if (cli_opt(a, "--maxrregcount", true)) {
    if (!a->failed && !cli_parse_int(a->value, 0, 100000, &n))
      return -cli_usage_error(ctx, a->cmd, "invalid --maxrregcount '%s': expected a number", a->value);
    m->opts.maxrregcount = a->failed ? 0 : (int)n;
  } else if (cli_opt(a, "--Ofast-compile", true)) {
    m->opts.ofast_compile = a->value;
  } else if (cli_opt(a, "--name-expr", true)) {
    *ok = push(&m->exprs, a->value);
  } else if (cli_opt(a, "-Xnvrtc", true)) {
    *ok = push(&m->xopts, a->value);
  } else {
    return 0;
  }
  return 1;
}

/* An option of what surrounds the compile: trace, JSON, cache, remote stores, verbosity. As
 * compile_opt. */
static int tool_opt(cli_ctx *ctx, cli_args *a, cli_module_args *m, bool *ok)
{
  const char *arg = a->argv[a->i];
  if (cli_opt(a, "--time-trace", false)) {
    size_t next = a->i + 1 < a->argc ? strlen(a->argv[a->i + 1]) : 0;
    m->want_trace = true;
    /* `--time-trace t.json`: a trace is JSON and a source never is, so the file is the trace's */
    if (next > 5 && !strcmp(a->argv[a->i + 1] + next - 5, ".json"))
      m->trace_arg = a->argv[++a->i];
  } else if (!a->rest && !strncmp(arg, "--time-trace=", 13)) {
    m->want_trace = true;
    m->trace_arg = arg + 13;
    if (!*m->trace_arg)
      return -cli_usage_error(ctx, a->cmd, "--time-trace= needs a file name");
  } else if (cli_json_opt(a, &m->json, &m->json_file)) {
  } else if (cli_opt(a, "--cache-dir", true)) {
    m->cache_dir = a->value;
  } else if (cli_opt(a, "--base-dir", true)) {
    m->base_dir = a->value;
  } else if (cli_opt(a, "--remote-cache", true)) {
    size_t used = strlen(m->remote);
    *ok = !a->value || used + strlen(a->value) + 2 < sizeof(m->remote);
    if (a->value && *ok)
      snprintf(m->remote + used, sizeof(m->remote) - used, "%s%s", used ? " " : "", a->value);
  } else if (cli_opt(a, "--remote-read-only", false)) {
    m->remote_read_only = true;
  } else if (cli_opt(a, "--no-cache", false)) {
    m->no_cache = true;
  } else if (cli_opt(a, "-q", false) || cli_opt(a, "--quiet", false)) {
    cli_set_verbosity(ctx, -1);
  } else if (cli_opt(a, "-v", false) || cli_opt(a, "--verbose", false)) {
    cli_set_verbosity(ctx, 1);
  } else {
    return 0;
  }
  return 1;
}

int cli_module_opt(cli_ctx *ctx, cli_args *a, cli_module_args *m)
{
  const char *arg = a->argv[a->i];
  bool ok = true;
  int r;
  if ((r = compile_opt(ctx, a, m, &ok)) == 0 && (r = tool_opt(ctx, a, m, &ok)) == 0) {
    if (cli_is_option(a))
      return 0;
    ok = push(&m->files, arg);
  }
  if (r < 0)
    return r;
  if (a->failed)
    return -cli_usage_error(ctx, a->cmd, "option '%s' needs a value", arg);
  if (!ok)
    return -cli_usage_error(ctx, a->cmd, "too many values (at most %d per option)", CLI_MAX_LIST);
  return 1;
}

int cli_module_prepare(cli_ctx *ctx, cli_module_args *m, const char *cmd, bool nvrtc_phases)
{
  int err;
  if (m->files.count == 0 && !m->files_optional)
    return cli_usage_error(ctx, cmd, "no input files");
  m->opts.include_dirs = m->incs.items;
  m->opts.include_dirs_count = m->incs.count;
  m->opts.defines = m->defs.items;
  m->opts.defines_count = m->defs.count;
  m->opts.undefines = m->undefs.items;
  m->opts.undefines_count = m->undefs.count;
  m->opts.name_expressions = m->exprs.items;
  m->opts.name_expressions_count = m->exprs.count;
  m->opts.nvrtc_options = m->xopts.items;
  m->opts.nvrtc_options_count = m->xopts.count;
  if ((err = gpujit_module_options_validate(&m->opts)) < 0) {
    fprintf(stderr, "%s: %s: %s\nTry 'gpujit %s --help'.\n", ctx->prog, cmd, gpujit_error_last(), cmd);
    return cli_exit_code(err);
  }
  if (m->want_trace || nvrtc_phases) {
    gpujit_trace_options topts = GPUJIT_TRACE_OPTIONS_INIT;
    char name[64];
    snprintf(name, sizeof(name), "gpujit %s", cmd);
    topts.process_name = name;
    if ((err = gpujit_trace_create(&m->trace, &topts)) < 0)
      return cli_fail(ctx, err);
    m->opts.trace = m->trace;
  }
  if (!m->no_cache) {
    gpujit_cache_options copts = GPUJIT_CACHE_OPTIONS_INIT;
    copts.dir = m->cache_dir;
    copts.base_dir = m->base_dir;
    if (m->remote[0])
      copts.remote = m->remote;
    if (m->remote_read_only)
      copts.remote_read_only = 1;
    if ((err = gpujit_cache_open(&m->cache, &copts)) < 0)
      cli_warn(ctx, "%s; building uncached", gpujit_error_last());
    m->opts.cache = m->cache;
  }
  return EXIT_OK;
}

bool cli_server_wanted(cli_ctx *ctx)
{
  static bool warned;
  int on;
  if (gpujit_server_env(&on) < 0) { /* ignored, as by the library's start on demand */
    if (!warned)
      cli_warn(ctx, "%s", gpujit_error_last());
    warned = true;
    gpujit_error_clear();
  }
  return on != 0;
}

void cli_server_after(cli_ctx *ctx, const gpujit_server_options *so, bool served, bool missed)
{
  char why[512];
  if (served || !missed || !gpujit_server_autostart(so))
    return;
  /* started for the next build, never waited for; where one holds the socket already, the new
   * one sees its lock and exits */
  if (cli_server_current(so) == 0 && gpujit_server_stop(so) < 0) /* a stale one: replaced */
    gpujit_error_clear();
  if (cli_server_spawn(so, false, why, sizeof(why)) < 0 && ctx->verbose > 0)
    cli_warn(ctx, "no build server: %s", why);
}

int cli_module_build(cli_ctx *ctx, cli_module_args *m, gpujit_module **out)
{
  gpujit_server_options so = GPUJIT_SERVER_OPTIONS_INIT;
  int served = 0, err;
  so.cache_dir = m->cache_dir;
  /* a running server takes the misses; GPUJIT_SERVER=0 keeps every build here */
  if (!cli_server_wanted(ctx))
    err = gpujit_module_build_files(out, m->files.items, m->files.count, &m->opts);
  else
    err = gpujit_server_build_files(out, m->files.items, m->files.count, &m->opts, &so, &served);
  cli_server_after(ctx, &so, served != 0, err < 0 || gpujit_module_cache_status(*out) != GPUJIT_CACHE_HIT);
  if (err < 0) {
    const char *log = gpujit_error_log();
    m->build_error = err;
    if (*log)
      fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
    return cli_fail(ctx, err);
  }
  return EXIT_OK;
}

void cli_module_args_free(cli_module_args *m)
{
  gpujit_trace_free(m->trace);
  gpujit_cache_free(m->cache);
  m->trace = NULL;
  m->cache = NULL;
}
