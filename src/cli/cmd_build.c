/* `gpujit build`: compile one module from one or more CUDA C files. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_LIST 256

static void build_help(void)
{
  printf("usage: gpujit build [options] FILE.cu...\n\n"
         "Compile CUDA C with NVRTC. Several files form one module: each compiles to LTO-IR\n"
         "and nvJitLink links them into one cubin.\n\n"
         "options:\n"
         "  --arch ARCH          sm_XX (cubin) or compute_XX (PTX); default: the GPU's, else\n"
         "                       $GPUJIT_ARCH, else " GPUJIT_DEFAULT_ARCH "\n"
         "  -I DIR               add an include directory (the source's own is always searched)\n"
         "  -D NAME[=VALUE]      define a macro\n"
         "  -U NAME              undefine a macro\n"
         "  --std STD            c++03, c++11, c++14, c++17 or c++20\n"
         "  --no-lineinfo        do not emit line info (on by default)\n"
         "  --no-line-directives do not wrap sources in #line directives\n"
         "  -G                   device debug info\n"
         "  --fast-math          --use_fast_math\n"
         "  --maxrregcount N     limit registers per thread (16..255)\n"
         "  --Ofast-compile L    0, min, mid or max\n"
         "  --name-expr EXPR     a name expression to lower, e.g. 'scale<float>' (repeatable)\n"
         "  -Xnvrtc OPT          pass OPT to NVRTC verbatim (repeatable)\n"
         "  --ptx                output PTX (with --arch compute_XX this is the default)\n"
         "  --lto-ir             output LTO-IR (one source)\n"
         "  -o FILE              output path (default: MODULE.cubin|.ptx|.ltoir here)\n"
         "  --time-trace[=FILE]  write a compile-time trace (default: OUTPUT minus its\n"
         "                       extension + .trace.json); opens in ui.perfetto.dev\n"
         "  --cache-dir DIR      kernel cache (default: $GPUJIT_CACHE_DIR, $XDG_CACHE_HOME/gpujit,\n"
         "                       ~/.cache/gpujit)\n"
         "  --no-cache           bypass the cache (also GPUJIT_NO_CACHE=1)\n"
         "  --base-dir DIR       paths under DIR enter cache keys relative to it (GPUJIT_BASE_DIR)\n"
         "  --log                print the NVRTC/nvJitLink log even on success\n"
         "  --json               print the result as JSON\n"
         "  -q, -v               quiet (errors only) or verbose (logs)\n"
         "  -h, --help           this help\n");
}

typedef struct list {
  const char *items[MAX_LIST];
  size_t count;
} list;

static bool push(list *l, const char *s)
{
  if (l->count == MAX_LIST)
    return false;
  l->items[l->count++] = s;
  return true;
}

static const char *ext_of(gpujit_output_kind k)
{
  return k == GPUJIT_OUTPUT_PTX ? "ptx" : k == GPUJIT_OUTPUT_LTOIR ? "ltoir" : "cubin";
}

static const char *kind_name(gpujit_output_kind k)
{
  return k == GPUJIT_OUTPUT_PTX ? "ptx" : k == GPUJIT_OUTPUT_LTOIR ? "ltoir" : "cubin";
}

static void print_text(cli_ctx *ctx, const gpujit_module *m, const char *out_path, const char *trace_path)
{
  gpujit_module_timings t;
  size_t size, nk = gpujit_module_kernel_count(m);
  char sz[32];
  const char *status = gpujit_module_cache_status(m) == GPUJIT_CACHE_HIT    ? "hit"
                       : gpujit_module_cache_status(m) == GPUJIT_CACHE_MISS ? "miss"
                                                                             : "uncached";
  if (ctx->verbose < 0)
    return;
  gpujit_module_timings_get(m, &t);
  gpujit_module_image(m, &size);
  printf("%s: %s  %s  %zu kernel%s  %s", gpujit_module_name(m), out_path, gpujit_module_arch(m), nk,
         nk == 1 ? "" : "s", cli_size(sz, sizeof(sz), (double)size));
  if (gpujit_module_cache_status(m) == GPUJIT_CACHE_HIT) {
    printf("  hit %.2f ms (saved %.1f ms)\n", t.total_ms, t.saved_ms);
  } else {
    printf("  compile %.1f ms", t.compile_ms);
    if (t.link_ms > 0)
      printf("  link %.1f ms", t.link_ms);
    printf("  %s\n", status);
  }
  for (size_t i = 0; i < nk; i++)
    printf("  kernel %s\n", gpujit_module_kernel(m, i));
  for (size_t i = 0; i < gpujit_module_name_expression_count(m); i++) {
    const char *lowered;
    const char *expr = gpujit_module_name_expression(m, i, &lowered);
    printf("  name %s -> %s\n", expr, lowered ? lowered : "?");
  }
  if (trace_path)
    printf("  trace %s\n", trace_path);
}

static void print_json(const gpujit_module *m, const char *out_path, const char *trace_path)
{
  cJSON *root = cJSON_CreateObject(), *mods = cJSON_AddArrayToObject(root, "modules");
  cJSON *j = cJSON_CreateObject(), *arr, *names, *timing;
  gpujit_module_timings t;
  size_t size;
  char *text;

  gpujit_module_timings_get(m, &t);
  gpujit_module_image(m, &size);
  cJSON_AddStringToObject(j, "module", gpujit_module_name(m));
  cJSON_AddStringToObject(j, "output", out_path);
  cJSON_AddStringToObject(j, "arch", gpujit_module_arch(m));
  cJSON_AddStringToObject(j, "kind", kind_name(gpujit_module_output(m)));
  cJSON_AddNumberToObject(j, "size", (double)size);
  arr = cJSON_AddArrayToObject(j, "kernels");
  for (size_t i = 0; i < gpujit_module_kernel_count(m); i++)
    cJSON_AddItemToArray(arr, cJSON_CreateString(gpujit_module_kernel(m, i)));
  names = cJSON_AddObjectToObject(j, "lowered_names");
  for (size_t i = 0; i < gpujit_module_name_expression_count(m); i++) {
    const char *lowered;
    const char *expr = gpujit_module_name_expression(m, i, &lowered);
    cJSON_AddStringToObject(names, expr, lowered ? lowered : "");
  }
  timing = cJSON_AddObjectToObject(j, "time_ms");
  cJSON_AddNumberToObject(timing, "read", t.read_ms);
  cJSON_AddNumberToObject(timing, "hash", t.hash_ms);
  cJSON_AddNumberToObject(timing, "lookup", t.lookup_ms);
  cJSON_AddNumberToObject(timing, "compile", t.compile_ms);
  cJSON_AddNumberToObject(timing, "link", t.link_ms);
  cJSON_AddNumberToObject(timing, "store", t.store_ms);
  cJSON_AddNumberToObject(timing, "total", t.total_ms);
  cJSON_AddNumberToObject(timing, "saved", t.saved_ms);
  cJSON_AddStringToObject(j, "cache", gpujit_module_cache_status(m) == GPUJIT_CACHE_HIT    ? "hit"
                                      : gpujit_module_cache_status(m) == GPUJIT_CACHE_MISS ? "miss"
                                                                                            : "none");
  if (gpujit_module_cache_key(m))
    cJSON_AddStringToObject(j, "key", gpujit_module_cache_key(m));
  if (trace_path)
    cJSON_AddStringToObject(j, "trace", trace_path);
  cJSON_AddItemToArray(mods, j);
  text = cJSON_Print(root);
  printf("%s\n", text);
  free(text);
  cJSON_Delete(root);
}

int cmd_build(cli_ctx *ctx, int argc, char **argv)
{
  gpujit_module_options opts = GPUJIT_MODULE_OPTIONS_INIT;
  list incs = {0}, defs = {0}, undefs = {0}, exprs = {0}, xopts = {0}, files = {0};
  cli_args a = {argc, 1, argv, "build", NULL, false};
  const char *out_path = NULL, *trace_arg = NULL, *cache_dir = NULL, *base_dir = NULL;
  const char *no_cache_env = getenv("GPUJIT_NO_CACHE");
  bool no_cache = no_cache_env && *no_cache_env && strcmp(no_cache_env, "0") != 0;
  gpujit_cache *cache = NULL;
  bool json = false, want_trace = false, show_log = false, ptx = false, ltoir = false;
  gpujit_trace *trace = NULL;
  gpujit_module *m = NULL;
  char default_out[4096], trace_path[4200];
  uint64_t write_span = 0;
  int err, rc = EXIT_OK;
  long n;

  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    bool ok = true;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      build_help();
      return EXIT_OK;
    } else if (cli_opt(&a, "--arch", true)) {
      opts.arch = a.value;
    } else if (cli_opt(&a, "-I", true)) {
      ok = push(&incs, a.value);
    } else if (cli_opt(&a, "-D", true)) {
      ok = push(&defs, a.value);
    } else if (cli_opt(&a, "-U", true)) {
      ok = push(&undefs, a.value);
    } else if (cli_opt(&a, "--std", true)) {
      opts.std = a.value;
    } else if (cli_opt(&a, "--no-lineinfo", false)) {
      opts.lineinfo = 0;
    } else if (cli_opt(&a, "--no-line-directives", false)) {
      opts.line_directives = 0;
    } else if (cli_opt(&a, "-G", false)) {
      opts.device_debug = 1;
    } else if (cli_opt(&a, "--fast-math", false)) {
      opts.fast_math = 1;
    } else if (cli_opt(&a, "--maxrregcount", true)) {
      if (!a.failed && !cli_parse_int(a.value, 0, 100000, &n))
        return cli_usage_error(ctx, "build", "invalid --maxrregcount '%s': expected a number", a.value);
      opts.maxrregcount = a.failed ? 0 : (int)n;
    } else if (cli_opt(&a, "--Ofast-compile", true)) {
      opts.ofast_compile = a.value;
    } else if (cli_opt(&a, "--name-expr", true)) {
      ok = push(&exprs, a.value);
    } else if (cli_opt(&a, "-Xnvrtc", true)) {
      ok = push(&xopts, a.value);
    } else if (cli_opt(&a, "-o", true)) {
      out_path = a.value;
    } else if (cli_opt(&a, "--ptx", false)) {
      ptx = true;
    } else if (cli_opt(&a, "--lto-ir", false)) {
      ltoir = true;
    } else if (!strcmp(arg, "--time-trace")) {
      want_trace = true;
    } else if (!strncmp(arg, "--time-trace=", 13)) {
      want_trace = true;
      trace_arg = arg + 13;
      if (!*trace_arg)
        return cli_usage_error(ctx, "build", "--time-trace= needs a file name");
    } else if (cli_opt(&a, "--json", false)) {
      json = true;
    } else if (cli_opt(&a, "--cache-dir", true)) {
      cache_dir = a.value;
    } else if (cli_opt(&a, "--base-dir", true)) {
      base_dir = a.value;
    } else if (cli_opt(&a, "--no-cache", false)) {
      no_cache = true;
    } else if (cli_opt(&a, "-q", false) || cli_opt(&a, "--quiet", false)) {
      ctx->verbose = -1;
    } else if (cli_opt(&a, "-v", false) || cli_opt(&a, "--verbose", false)) {
      ctx->verbose = 1;
    } else if (cli_opt(&a, "--log", false)) {
      show_log = true;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return cli_usage_error(ctx, "build", "unknown option '%s'", arg);
    } else {
      ok = push(&files, arg);
    }
    if (a.failed)
      return cli_usage_error(ctx, "build", "option '%s' needs a value", arg);
    if (!ok)
      return cli_usage_error(ctx, "build", "too many values (at most %d per option)", MAX_LIST);
  }
  if (files.count == 0)
    return cli_usage_error(ctx, "build", "no input files");
  if (ptx && ltoir)
    return cli_usage_error(ctx, "build", "--ptx and --lto-ir exclude each other");
  opts.output = ptx ? GPUJIT_OUTPUT_PTX : ltoir ? GPUJIT_OUTPUT_LTOIR : GPUJIT_OUTPUT_AUTO;
  opts.include_dirs = incs.items;
  opts.include_dirs_count = incs.count;
  opts.defines = defs.items;
  opts.defines_count = defs.count;
  opts.undefines = undefs.items;
  opts.undefines_count = undefs.count;
  opts.name_expressions = exprs.items;
  opts.name_expressions_count = exprs.count;
  opts.nvrtc_options = xopts.items;
  opts.nvrtc_options_count = xopts.count;
  if ((err = gpujit_module_options_validate(&opts)) < 0) {
    fprintf(stderr, "%s: build: %s\nTry 'gpujit build --help'.\n", ctx->prog, gpujit_error_last());
    return cli_exit_code(err);
  }
  if (want_trace) {
    gpujit_trace_options topts = GPUJIT_TRACE_OPTIONS_INIT;
    topts.process_name = "gpujit build";
    if ((err = gpujit_trace_create(&trace, &topts)) < 0)
      return cli_fail(ctx, err);
    opts.trace = trace;
  }

  if (!no_cache) {
    gpujit_cache_options copts = GPUJIT_CACHE_OPTIONS_INIT;
    copts.dir = cache_dir;
    copts.base_dir = base_dir;
    if ((err = gpujit_cache_open(&cache, &copts)) < 0)
      cli_warn(ctx, "%s; building uncached", gpujit_error_last());
    opts.cache = cache;
  }
  err = gpujit_module_build_files(&m, files.items, files.count, &opts);
  if (err < 0) {
    const char *log = gpujit_error_log();
    if (*log)
      fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
    rc = cli_fail(ctx, err);
    goto done;
  }
  if (!out_path) {
    snprintf(default_out, sizeof(default_out), "%s.%s", gpujit_module_name(m), ext_of(gpujit_module_output(m)));
    out_path = default_out;
  }
  gpujit_trace_span_begin(trace, &write_span, "gpujit", "write output");
  gpujit_trace_span_arg_str(trace, write_span, "path", out_path);
  err = gpujit_module_write(m, out_path);
  gpujit_trace_span_end(trace, write_span);
  if (err < 0) {
    rc = cli_fail(ctx, err);
    goto done;
  }
  if ((show_log || ctx->verbose > 0) && *gpujit_module_log(m))
    fprintf(stderr, "%s\n", gpujit_module_log(m));
  if (trace) {
    const char *dot = strrchr(out_path, '.'), *slash = strrchr(out_path, '/');
    if (trace_arg)
      snprintf(trace_path, sizeof(trace_path), "%s", trace_arg);
    else if (dot && (!slash || dot > slash))
      snprintf(trace_path, sizeof(trace_path), "%.*s.trace.json", (int)(dot - out_path), out_path);
    else
      snprintf(trace_path, sizeof(trace_path), "%s.trace.json", out_path);
    gpujit_trace_set_meta(trace, "module", gpujit_module_name(m));
    gpujit_trace_set_meta(trace, "arch", gpujit_module_arch(m));
    if ((err = gpujit_trace_write(trace, trace_path)) < 0) {
      rc = cli_fail(ctx, err);
      goto done;
    }
  }
  if (json)
    print_json(m, out_path, trace ? trace_path : NULL);
  else
    print_text(ctx, m, out_path, trace ? trace_path : NULL);
done:
  gpujit_module_free(m);
  gpujit_trace_free(trace);
  gpujit_cache_free(cache);
  return rc;
}
