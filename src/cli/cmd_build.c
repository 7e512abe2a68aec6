/* `gpujit build`: compile one module from one or more CUDA C files. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"


static void build_help(void)
{
  printf("usage: gpujit build [options] FILE.cu...\n"
         "       gpujit build [options] [-j N] DIR... | --modules FILE\n\n"
         "Compile CUDA C with NVRTC. Several files form one module: each compiles to LTO-IR\n"
         "and nvJitLink links them into one cubin. Every build goes through the kernel cache.\n\n"
         "A directory is a project: every *.cu beneath it is its own module, unless the directory\n"
         "holds a modules.json, which says what its modules are. --modules FILE reads\n"
         "a JSON manifest: {\"modules\": [{\"name\", \"files\": [...], \"options\": {...},\n"
         "\"output\"}]} (see docs/project-builds.md). Cache hits are served at once; misses compile\n"
         "on N worker processes, which keep precompiled headers for modules sharing an include\n"
         "block. Exit 3 when any module failed, 130 when interrupted.\n\n"
         "options:\n%s"
         "  --ptx                output PTX (with --arch compute_XX this is the default)\n"
         "  --lto-ir             output LTO-IR (one source)\n"
         "  -o FILE              output path (default: MODULE.cubin|.ptx|.ltoir here)\n"
         "  --time-trace without =FILE writes next to the output as MODULE.trace.json\n"
         "  --log                print the NVRTC/nvJitLink log even on success\n"
         "  --ncu-command        print a ready Nsight Compute command line per kernel\n"
         "  -j, --jobs N         project builds: worker processes (default: the number of cores)\n"
         "  --modules FILE       build the modules of a JSON manifest\n"
         "  --out-dir DIR        project outputs go here, mirroring the input tree (default:\n"
         "                       beside each source); --time-trace=FILE: one trace, a track per\n"
         "                       worker (default gpujit-project.trace.json)\n"
         "  -h, --help           this help\n", cli_module_help);
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
    const char *why;
    gpujit_pch_status pch = gpujit_module_pch(m, &why);
    printf("  compile %.1f ms", t.compile_ms);
    if (t.link_ms > 0)
      printf("  link %.1f ms", t.link_ms);
    printf("  %s", status);
    if (pch == GPUJIT_PCH_STATUS_CREATED || pch == GPUJIT_PCH_STATUS_USED || pch == GPUJIT_PCH_STATUS_REFUSED)
      printf("  pch %s", gpujit_pch_status_name(pch));
    printf("\n");
    if (ctx->verbose > 0 && *why)
      printf("  pch %s: %s\n", gpujit_pch_status_name(pch), why);
  }
  cli_print_lean(m);
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

/* One module's build as the "gpujit-build" document: `m` built, or NULL after `err` failed. */
static int emit_json(cli_ctx *ctx, const cli_module_args *ma, const gpujit_module *m, int err, const char *out_path,
                     const char *trace_path)
{
  cli_build_row r = {0};
  cli_build_summary s = {0};
  gpujit_module_timings t = {0};
  char name[256];
  const char *first = ma->files.count ? ma->files.items[0] : "", *slash = strrchr(first, '/'), *dot;
  gpujit_cache_status cs = m ? gpujit_module_cache_status(m) : GPUJIT_CACHE_NONE;
  /* a failed build has no module to name it: its first file's name, as a build would say */
  slash = slash ? slash + 1 : first;
  dot = strrchr(slash, '.');
  snprintf(name, sizeof(name), "%.*s", dot ? (int)(dot - slash) : (int)strlen(slash), slash);
  r.name = m ? gpujit_module_name(m) : name;
  r.output = m ? out_path : NULL;
  r.status = !m ? "failed" : cs == GPUJIT_CACHE_HIT ? "hit" : "built";
  r.cached = ma->cache != NULL;
  r.module = m;
  r.start_ms = -1, r.worker = -1;
  if (m) {
    r.pch = gpujit_module_pch(m, &r.pch_reason);
    gpujit_module_timings_get(m, &t);
  } else {
    r.error = err, r.message = gpujit_error_last(), r.log = gpujit_error_log();
  }
  s.modules = 1;
  s.hits = cs == GPUJIT_CACHE_HIT;
  s.built = m && cs != GPUJIT_CACHE_HIT;
  s.failed = !m;
  s.wall_ms = t.total_ms;
  s.compile_ms = t.compile_ms + t.link_ms;
  s.critical_ms = t.total_ms;
  s.trace = trace_path;
  {
    cJSON *records = cJSON_CreateArray();
    if (records)
      cJSON_AddItemToArray(records, cli_build_record(&r));
    return cli_json_emit(ctx, cli_build_document(records, &s), "gpujit-build", ma->json_file);
  }
}

int cmd_build(cli_ctx *ctx, int argc, char **argv)
{
  cli_module_args ma;
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "build"};
  const char *out_path = NULL;
  bool show_log = false, ptx = false, ltoir = false, ncu = false;
  gpujit_module *m = NULL;
  char default_out[4096], trace_path[4200];
  uint64_t write_span = 0;
  int err, rc;

  cli_project_args pa = {0};
  bool jobs_given = false;
  cli_module_args_init(&ma);
  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    int r;
    if (cli_end_of_options(&a)) {
      continue;
    } else if (cli_opt(&a, "-h", false) || cli_opt(&a, "--help", false)) {
      build_help();
      return EXIT_OK;
    } else if ((r = cli_module_opt(ctx, &a, &ma)) != 0) {
      if (r < 0)
        return -r;
    } else if (cli_opt(&a, "-o", true)) {
      out_path = a.value;
    } else if (cli_opt(&a, "--ptx", false)) {
      ptx = true;
    } else if (cli_opt(&a, "--lto-ir", false)) {
      ltoir = true;
    } else if (cli_opt(&a, "--log", false)) {
      show_log = true;
    } else if (cli_opt(&a, "--ncu-command", false)) {
      ncu = true;
    } else if (cli_opt(&a, "-j", true) || cli_opt(&a, "--jobs", true)) {
      long n;
      if (!a.failed && !cli_parse_int(a.value, 1, 4096, &n))
        return cli_usage_error(ctx, "build", "invalid job count '%s': expected 1..4096", a.value);
      pa.jobs = a.failed ? 0 : (int)n;
      jobs_given = true;
    } else if (cli_opt(&a, "--modules", true)) {
      pa.manifest = a.value;
    } else if (cli_opt(&a, "--out-dir", true)) {
      pa.out_dir = a.value;
    } else {
      return cli_unknown_option(ctx, &a, "build");
    }
    if (a.failed)
      return cli_usage_error(ctx, "build", "option '%s' needs a value", arg);
  }
  if (ptx && ltoir)
    return cli_usage_error(ctx, "build", "--ptx and --lto-ir exclude each other");
  ma.opts.output = ptx ? GPUJIT_OUTPUT_PTX : ltoir ? GPUJIT_OUTPUT_LTOIR : GPUJIT_OUTPUT_AUTO;
  {
    size_t dirs = 0;
    struct stat st;
    for (size_t i = 0; i < ma.files.count; i++)
      dirs += stat(ma.files.items[i], &st) == 0 && S_ISDIR(st.st_mode);
    if (pa.manifest || dirs) {
      if (dirs != ma.files.count)
        return cli_usage_error(ctx, "build", "give directories or files, not both (a manifest can list files)");
      if (out_path || ncu)
        return cli_usage_error(ctx, "build", "-o and --ncu-command take one module; use --out-dir");
      ma.files_optional = true;
      if ((rc = cli_module_prepare(ctx, &ma, "build", false)) == EXIT_OK)
        rc = cli_build_project(ctx, &ma, &pa);
      cli_module_args_free(&ma);
      return rc;
    }
    if (jobs_given && ma.files.count > 1 && ctx->verbose >= 0)
      cli_warn(ctx, "-j applies to projects (directories, --modules); these %zu files are one module",
               ma.files.count);
    if (pa.out_dir)
      return cli_usage_error(ctx, "build", "--out-dir is for directories and --modules; use -o for one module");
  }
  if ((rc = cli_module_prepare(ctx, &ma, "build", false)) != EXIT_OK)
    goto done;
  if ((rc = cli_module_build(ctx, &ma, &m)) != EXIT_OK) {
    struct stat st;
    /* a failed build leaves no output, as compilers do: never an older build's image */
    if (out_path && stat(out_path, &st) == 0 && S_ISREG(st.st_mode))
      unlink(out_path);
    if (ma.json && ma.build_error) /* the failure as a result too: status "failed" and its error */
      emit_json(ctx, &ma, NULL, ma.build_error, NULL, NULL);
    goto done;
  }
  if (!out_path) {
    snprintf(default_out, sizeof(default_out), "%s.%s", gpujit_module_name(m), gpujit_output_kind_name(gpujit_module_output(m)));
    out_path = default_out;
  }
  gpujit_trace_span_begin(ma.trace, &write_span, "gpujit", "write output");
  gpujit_trace_span_arg_str(ma.trace, write_span, "path", out_path);
  err = gpujit_module_write(m, out_path);
  gpujit_trace_span_end(ma.trace, write_span);
  if (err < 0) {
    rc = cli_fail(ctx, err);
    goto done;
  }
  if ((show_log || ctx->verbose > 0) && *gpujit_module_log(m))
    fprintf(stderr, "%s\n", gpujit_module_log(m));
  if (ma.trace) {
    const char *dot = strrchr(out_path, '.'), *slash = strrchr(out_path, '/');
    if (ma.trace_arg)
      snprintf(trace_path, sizeof(trace_path), "%s", ma.trace_arg);
    else if (dot && (!slash || dot > slash))
      snprintf(trace_path, sizeof(trace_path), "%.*s.trace.json", (int)(dot - out_path), out_path);
    else
      snprintf(trace_path, sizeof(trace_path), "%s.trace.json", out_path);
    gpujit_trace_set_meta(ma.trace, "module", gpujit_module_name(m));
    gpujit_trace_set_meta(ma.trace, "arch", gpujit_module_arch(m));
    if ((err = gpujit_trace_write(ma.trace, trace_path)) < 0) {
      rc = cli_fail(ctx, err);
      goto done;
    }
  }
  if (ma.json)
    rc = emit_json(ctx, &ma, m, 0, out_path, ma.trace ? trace_path : NULL);
  else
    print_text(ctx, m, out_path, ma.trace ? trace_path : NULL);
  if (ncu)
    cli_print_ncu_commands(m, ma.cache, 0, NULL, NULL, 0);
done:
  gpujit_module_free(m);
  cli_module_args_free(&ma);
  return rc;
}
