#define _GNU_SOURCE
/* `gpujit build` over a project: directories of modules or a --modules manifest, on -j worker
 * processes, with a progress line, whole diagnostics per failed module, and a summary. */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static volatile int interrupted;

static void on_sigint(int sig)
{
  (void)sig;
  interrupted = 1;
}

typedef struct view {
  cli_ctx *ctx;
  bool tty, json, cached;
  bool line_shown;
  size_t served; /* modules the build server built */
} view;

static void clear_line(view *v)
{
  if (v->line_shown) {
    fputs("\r\033[K", stdout);
    v->line_shown = false;
  }
}

static void on_module(void *user, const gpujit_project_result *r)
{
  view *v = user;
  if (r->status == GPUJIT_PROJECT_FAILED) { /* whole, in one write, never interleaved */
    size_t len = strlen(r->log);
    char *text = malloc(len + strlen(r->name) + strlen(r->message) + 64);
    clear_line(v);
    fflush(stdout);
    if (text) {
      int n = sprintf(text, "%s: error: %s\n%s%s", r->name, r->message, r->log,
                      len && r->log[len - 1] != '\n' ? "\n" : "");
      if (write(STDERR_FILENO, text, (size_t)n) < 0)
        (void)0;
      free(text);
    }
    return;
  }
  if (v->json || v->ctx->verbose < 0)
    return;
  clear_line(v);
  if (r->status == GPUJIT_PROJECT_HIT)
    printf("%s: %s  hit\n", r->name, r->output ? r->output : "-");
  else
    printf("%s: %s  compile %.1f ms  worker %d  pch %s\n", r->name, r->output ? r->output : "-", r->compile_ms,
           r->worker, gpujit_pch_status_name(r->pch));
  fflush(stdout);
}

static void on_progress(void *user, const gpujit_project_progress *p)
{
  view *v = user;
  if (!v->tty || v->json || v->ctx->verbose < 0)
    return;
  clear_line(v);
  printf("[%zu/%zu] %zu running  %.1f s", p->done, p->total, p->running, p->elapsed_ms / 1e3);
  if (p->eta_ms >= 0 && p->done < p->total)
    printf("  ~%.0f s left", p->eta_ms / 1e3 + 0.5);
  fflush(stdout);
  v->line_shown = true;
}

static int emit_json(cli_ctx *ctx, const view *v, const gpujit_project *p, const char *trace_path, const char *file)
{
  cJSON *mods = cJSON_CreateArray();
  gpujit_project_summary sum;
  cli_build_summary s = {0};
  for (size_t i = 0; mods && i < gpujit_project_count(p); i++) {
    const gpujit_project_result *r = gpujit_project_result_get(p, i);
    cli_build_row row = {0};
    row.name = r->name;
    row.output = r->output;
    row.status = r->status == GPUJIT_PROJECT_HIT      ? "hit"
                 : r->status == GPUJIT_PROJECT_BUILT  ? "built"
                 : r->status == GPUJIT_PROJECT_FAILED ? "failed"
                                                      : "cancelled";
    row.cached = v->cached;
    row.module = r->module;
    row.compile_ms = r->compile_ms, row.total_ms = r->wall_ms, row.start_ms = r->start_ms;
    row.worker = r->worker;
    row.pch = r->pch, row.pch_reason = r->pch_reason;
    row.error = r->error, row.message = r->message, row.log = r->log;
    row.miss_reason = r->status == GPUJIT_PROJECT_BUILT ? r->miss_reason : NULL;
    cJSON_AddItemToArray(mods, cli_build_record(&row));
  }
  gpujit_project_summary_get(p, &sum);
  s.modules = sum.modules, s.hits = sum.hits, s.built = sum.built, s.failed = sum.failed;
  s.cancelled = sum.cancelled, s.workers = sum.workers, s.served = v->served;
  s.wall_ms = sum.wall_ms, s.compile_ms = sum.compile_ms, s.critical_ms = sum.critical_ms;
  s.pch_created = sum.pch_created, s.pch_used = sum.pch_used, s.trace = trace_path;
  return cli_json_emit(ctx, cli_build_document(mods, &s), "gpujit-build", file);
}

static void print_summary(view *v, const gpujit_project *p, const char *trace_path)
{
  gpujit_project_summary s;
  gpujit_project_summary_get(p, &s);
  clear_line(v);
  if (v->ctx->verbose < 0 && !s.failed)
    return;
  printf("%zu module%s: %zu hit%s, %zu built, %zu failed", s.modules, s.modules == 1 ? "" : "s", s.hits,
         s.hits == 1 ? "" : "s", s.built, s.failed);
  if (s.cancelled)
    printf(", %zu cancelled", s.cancelled);
  printf(" in %.2f s on ", s.wall_ms / 1e3);
  if (v->served)
    printf("the build server%s", s.workers ? " and " : "");
  if (v->served == 0 || s.workers)
    printf("%d worker%s", s.workers, s.workers == 1 ? "" : "s");
  printf(" (compile %.1f s in all; pch %zu created, %zu used)\n", s.compile_ms / 1e3, s.pch_created, s.pch_used);
  for (size_t i = 0; s.failed && i < gpujit_project_count(p); i++) {
    const gpujit_project_result *r = gpujit_project_result_get(p, i);
    if (r->status == GPUJIT_PROJECT_FAILED)
      printf("  failed: %s: %s\n", r->name, r->message);
  }
  if (trace_path)
    printf("  trace %s\n", trace_path);
}

int cli_build_project(cli_ctx *ctx, cli_module_args *ma, const cli_project_args *pa)
{
  gpujit_project *p = NULL;
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT;
  view v = {ctx, isatty(STDOUT_FILENO) != 0, ma->json, ma->cache != NULL, false, 0};
  gpujit_server_options so = GPUJIT_SERVER_OPTIONS_INIT;
  struct sigaction sa, old;
  const char *ext = gpujit_output_kind_name(ma->opts.output == GPUJIT_OUTPUT_AUTO
                                                ? (ma->opts.arch && !strncmp(ma->opts.arch, "compute_", 8)
                                                       ? GPUJIT_OUTPUT_PTX
                                                       : GPUJIT_OUTPUT_CUBIN)
                                                : ma->opts.output);
  char trace_path[4200];
  int err = 0, rc = EXIT_OK;

  if (gpujit_project_create(&p) < 0)
    return cli_fail(ctx, GPUJIT_ENOMEM);
  if (pa->manifest)
    err = gpujit_project_add_manifest(p, pa->manifest, pa->out_dir, &ma->opts, ext);
  for (size_t i = 0; err == 0 && i < ma->files.count; i++) {
    /* One directory's tree goes straight under out_dir; several go to out_dir/BASENAME/. */
    char out[8192], base[4096];
    const char *d = ma->files.items[i], *slash;
    size_t len = strlen(d);
    while (len > 1 && d[len - 1] == '/')
      len--;
    snprintf(base, sizeof(base), "%.*s", (int)len, d);
    slash = strrchr(base, '/');
    if (pa->out_dir && ma->files.count > 1)
      snprintf(out, sizeof(out), "%s/%s", pa->out_dir, slash ? slash + 1 : base);
    else if (pa->out_dir)
      snprintf(out, sizeof(out), "%s", pa->out_dir);
    { /* a directory that says what its modules are (DIR/modules.json) is built as it says, as
       * make reads a Makefile: files that belong together (an LTO module) stay one module */
      char manifest[8192];
      struct stat st;
      snprintf(manifest, sizeof(manifest), "%s/modules.json", base);
      if (stat(manifest, &st) == 0 && S_ISREG(st.st_mode)) {
        err = gpujit_project_add_manifest(p, manifest, pa->out_dir ? out : NULL, &ma->opts, ext);
        continue;
      }
    }
    err = gpujit_project_add_dir(p, d, pa->out_dir ? out : NULL, &ma->opts, ext);
  }
  if (err < 0) {
    gpujit_project_free(p);
    return cli_fail(ctx, err);
  }
  po.jobs = pa->jobs;
  po.cache = ma->cache;
  po.trace = ma->trace;
  po.pch = ma->opts.pch != GPUJIT_PCH_OFF;
  po.on_module = on_module;
  po.on_progress = on_progress;
  po.user = &v;
  po.cancel = &interrupted;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, &old);
  so.cache_dir = ma->cache_dir;
  /* a running server's warm workers take the misses; GPUJIT_SERVER=0 keeps them to this build's */
  err = cli_server_wanted(ctx) ? gpujit_server_build_project(p, &po, &so, &v.served) : gpujit_project_build(p, &po);
  sigaction(SIGINT, &old, NULL);
  {
    gpujit_project_summary sum;
    gpujit_project_summary_get(p, &sum);
    cli_server_after(ctx, &so, v.served > 0, sum.built + sum.failed > 0);
  }
  clear_line(&v);
  if (ma->trace) {
    int terr;
    snprintf(trace_path, sizeof(trace_path), "%s", ma->trace_arg ? ma->trace_arg : "gpujit-project.trace.json");
    gpujit_trace_set_meta(ma->trace, "project_modules", "see the build spans");
    if ((terr = gpujit_trace_write(ma->trace, trace_path)) < 0)
      rc = cli_fail(ctx, terr);
  }
  if (ma->json) {
    int jrc = emit_json(ctx, &v, p, ma->trace ? trace_path : NULL, ma->json_file);
    rc = rc == EXIT_OK ? jrc : rc;
  } else
    print_summary(&v, p, ma->trace ? trace_path : NULL);
  if (err == GPUJIT_ECANCELLED) {
    fprintf(stderr, "%s: build: interrupted; the cache is consistent\n", ctx->prog);
    rc = 130;
  } else if (err == GPUJIT_ECOMPILE) {
    rc = EXIT_COMPILE;
  } else if (err < 0) {
    rc = cli_fail(ctx, err);
  }
  gpujit_project_free(p);
  return rc;
}
