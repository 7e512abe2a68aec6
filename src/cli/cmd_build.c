/* `gpujit build`: compile one module from one or more CUDA C files. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <cjson/cJSON.h>
#include <limits.h>
#include <sched.h>
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
         "  -j, --jobs N         project builds: worker processes (default: the number of cores;\n"
         "                       at most twice the CPUs this process may use, said when bounded)\n"
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
                       : gpujit_module_uncacheable(m)                        ? "uncacheable"
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
  if (ctx->verbose > 0) /* what the lean pass did: under -v */
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

/* The command line of one `gpujit build`. */
typedef struct build_cmd {
  cli_module_args ma;
  cli_project_args pa;
  const char *out_path;
  bool show_log, ptx, ltoir, ncu, jobs_given;
  char default_out[4096], trace_path[4200];
} build_cmd;

/* One argument: the build's own option or a module option. *help: -h was given. */
static int parse_one(cli_ctx *ctx, cli_args *a, build_cmd *b, bool *help)
{
  int r;
  if (cli_end_of_options(a))
    return EXIT_OK;
  if (cli_opt(a, "-h", false) || cli_opt(a, "--help", false)) {
    *help = true;
  } else if ((r = cli_module_opt(ctx, a, &b->ma)) != 0) {
    return r < 0 ? -r : EXIT_OK;
  } else if (cli_opt(a, "-o", true)) {
    b->out_path = a->value;
  } else if (cli_opt(a, "--ptx", false)) {
    b->ptx = true;
  } else if (cli_opt(a, "--lto-ir", false)) {
    b->ltoir = true;
  } else if (cli_opt(a, "--log", false)) {
    b->show_log = true;
  } else if (cli_opt(a, "--ncu-command", false)) {
    b->ncu = true;
  } else if (cli_opt(a, "-j", true) || cli_opt(a, "--jobs", true)) {
    long n;
    if (!a->failed && !cli_parse_int(a->value, 1, INT_MAX, &n))
      return cli_usage_error(ctx, "build", "invalid job count '%s': expected a whole number of 1 or more", a->value);
    b->pa.jobs = a->failed ? 0 : (int)n;
    b->jobs_given = true;
  } else if (cli_opt(a, "--modules", true)) {
    b->pa.manifest = a->value;
  } else if (cli_opt(a, "--out-dir", true)) {
    b->pa.out_dir = a->value;
  } else {
    return cli_unknown_option(ctx, a, "build");
  }
  return EXIT_OK;
}

static int parse(cli_ctx *ctx, int argc, char **argv, build_cmd *b, bool *help)
{
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "build"};
  int rc;
  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    if ((rc = parse_one(ctx, &a, b, help)) != EXIT_OK || *help)
      return rc;
    if (a.failed)
      return cli_usage_error(ctx, "build", "option '%s' needs a value", arg);
  }
  if (b->ptx && b->ltoir)
    return cli_usage_error(ctx, "build", "--ptx and --lto-ir exclude each other");
  b->ma.opts.output = b->ptx ? GPUJIT_OUTPUT_PTX : b->ltoir ? GPUJIT_OUTPUT_LTOIR : GPUJIT_OUTPUT_AUTO;
  return EXIT_OK;
}

/* The CPUs this process may run on (as nproc counts them: its affinity mask), at least 1. */
static long usable_cpus(void)
{
  cpu_set_t set;
  long n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? n : 1;
}

/* -j N, as make and ninja take it (any count), but bounded by the machine: each worker is a
 * process holding its own NVRTC, and NVRTC's compiles are CPU-bound, so workers past twice the
 * CPUs only wait for them while taking memory. Said once, unless -q. */
static void bound_jobs(cli_ctx *ctx, build_cmd *b)
{
  long most = 2 * usable_cpus();
  if (!b->jobs_given || b->pa.jobs <= most)
    return;
  if (ctx->verbose >= 0)
    cli_warn(ctx, "-j %d: %ld workers at most here (twice the %ld CPUs this process may use; more would only "
                  "wait for them)",
             b->pa.jobs, most, most / 2);
  b->pa.jobs = (int)most;
}

/* Directories or a manifest are a project (built whole, *project set); files are one module,
 * where the project's options do not apply. Returns an exit code. */
static int build_project(cli_ctx *ctx, build_cmd *b, bool *project)
{
  size_t dirs = 0;
  struct stat st;
  for (size_t i = 0; i < b->ma.files.count; i++)
    dirs += stat(b->ma.files.items[i], &st) == 0 && S_ISDIR(st.st_mode);
  *project = b->pa.manifest || dirs;
  if (*project) {
    int rc;
    if (dirs != b->ma.files.count)
      return cli_usage_error(ctx, "build", "give directories or files, not both (a manifest can list files)");
    if (b->out_path || b->ncu)
      return cli_usage_error(ctx, "build", "-o and --ncu-command take one module; use --out-dir");
    b->ma.files_optional = true;
    bound_jobs(ctx, b);
    if ((rc = cli_module_prepare(ctx, &b->ma, "build", false)) == EXIT_OK)
      rc = cli_build_project(ctx, &b->ma, &b->pa);
    return rc;
  }
  if (b->jobs_given && b->ma.files.count > 1 && ctx->verbose >= 0)
    cli_warn(ctx, "-j applies to projects (directories, --modules); these %zu files are one module",
             b->ma.files.count);
  if (b->pa.out_dir)
    return cli_usage_error(ctx, "build", "--out-dir is for directories and --modules; use -o for one module");
  return EXIT_OK;
}

/* The trace: --time-trace=FILE, else beside the output as MODULE.trace.json. */
static int write_trace(cli_ctx *ctx, build_cmd *b, const gpujit_module *m)
{
  const char *out = b->out_path, *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
  int err;
  if (b->ma.trace_arg)
    snprintf(b->trace_path, sizeof(b->trace_path), "%s", b->ma.trace_arg);
  else if (dot && (!slash || dot > slash))
    snprintf(b->trace_path, sizeof(b->trace_path), "%.*s.trace.json", (int)(dot - out), out);
  else
    snprintf(b->trace_path, sizeof(b->trace_path), "%s.trace.json", out);
  gpujit_trace_set_meta(b->ma.trace, "module", gpujit_module_name(m));
  gpujit_trace_set_meta(b->ma.trace, "arch", gpujit_module_arch(m));
  if ((err = gpujit_trace_write(b->ma.trace, b->trace_path)) < 0)
    return cli_fail(ctx, err);
  return EXIT_OK;
}

/* The module built and written, its log, trace and report. Returns an exit code. */
static int build_module(cli_ctx *ctx, build_cmd *b, gpujit_module **m)
{
  uint64_t write_span = 0;
  int err, rc;
  if ((rc = cli_module_prepare(ctx, &b->ma, "build", false)) != EXIT_OK)
    return rc;
  if ((rc = cli_module_build(ctx, &b->ma, m)) != EXIT_OK) {
    struct stat st;
    /* a failed build leaves no output, as compilers do: never an older build's image */
    if (b->out_path && stat(b->out_path, &st) == 0 && S_ISREG(st.st_mode))
      unlink(b->out_path);
    if (b->ma.json && b->ma.build_error) /* the failure as a result too: status "failed" and its error */
      emit_json(ctx, &b->ma, NULL, b->ma.build_error, NULL, NULL);
    return rc;
  }
  if (!b->out_path) {
    snprintf(b->default_out, sizeof(b->default_out), "%s.%s", gpujit_module_name(*m),
             gpujit_output_kind_name(gpujit_module_output(*m)));
    b->out_path = b->default_out;
  }
  gpujit_trace_span_begin(b->ma.trace, &write_span, "gpujit", "write output");
  gpujit_trace_span_arg_str(b->ma.trace, write_span, "path", b->out_path);
  err = gpujit_module_write(*m, b->out_path);
  gpujit_trace_span_end(b->ma.trace, write_span);
  if (err < 0)
    return cli_fail(ctx, err);
  if ((b->show_log || ctx->verbose > 0) && *gpujit_module_log(*m))
    fprintf(stderr, "%s\n", gpujit_module_log(*m));
  if (b->ma.trace && (rc = write_trace(ctx, b, *m)) != EXIT_OK)
    return rc;
  if (b->ma.json)
    rc = emit_json(ctx, &b->ma, *m, 0, b->out_path, b->ma.trace ? b->trace_path : NULL);
  else
    print_text(ctx, *m, b->out_path, b->ma.trace ? b->trace_path : NULL);
  if (b->ncu)
    cli_print_ncu_commands(*m, b->ma.cache, 0, NULL, NULL, 0);
  return rc;
}

int cmd_build(cli_ctx *ctx, int argc, char **argv)
{
  build_cmd *b = calloc(1, sizeof(*b));
  gpujit_module *m = NULL;
  bool help = false, project = false;
  int rc;
  if (!b) {
    fprintf(stderr, "%s: build: out of memory\n", ctx->prog);
    return EXIT_FAILURE_;
  }
  cli_module_args_init(&b->ma);
  if ((rc = parse(ctx, argc, argv, b, &help)) == EXIT_OK && help)
    build_help();
  else if (rc == EXIT_OK && (rc = build_project(ctx, b, &project)) == EXIT_OK && !project)
    rc = build_module(ctx, b, &m);
  gpujit_module_free(m);
  cli_module_args_free(&b->ma);
  free(b);
  return rc;
}
