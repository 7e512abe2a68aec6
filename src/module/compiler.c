/* The miss path of a build: each source through NVRTC (wrapped in #line where gpujit joins text),
 * several sources linked by nvJitLink, then the image's kernels and lowered names. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "compile/image/image.h"
#include "compile/includes/includes.h"
#include "compile/nvrtc/link.h"
#include "compile/nvrtc/nvrtc.h"
#include "compile/nvrtc/options.h"
#include "compile/pch/pch.h"
#include "module/compiler.h"
#include "module/deps.h"
#include "module/lean.h"
#include "module/stage.h"
#include "trace/events.h"
#include "trace/nvrtc.h"

/*
 * The program is named by the source's absolute path, so NVRTC's diagnostics and line table
 * name the user's file as they stand. A prelude is pre-included as an in-memory header
 * (compile/nvrtc/nvrtc.c), so the user's lines keep their numbers without a #line directive — a #line
 * before the include block would stop NVRTC from making a precompiled header. Only with
 * line_directives off is it joined in front of the text (the lines then shift).
 */
static int wrap_source(gpujit__buf *out, const char *prelude, const char *data, size_t size)
{
  int err;
  out->len = 0;
  if (prelude && *prelude) {
    if ((err = gpujit__buf_puts(out, prelude)) < 0 || (err = gpujit__buf_puts(out, "\n")) < 0)
      return err;
  }
  return gpujit__buf_put(out, data, size);
}

/* used > created > refused > none > off */
static int pch_rank(gpujit_pch_status s)
{
  static const int rank[] = {[GPUJIT_PCH_STATUS_OFF] = 0, [GPUJIT_PCH_STATUS_NONE] = 1,
                             [GPUJIT_PCH_STATUS_REFUSED] = 2, [GPUJIT_PCH_STATUS_CREATED] = 3,
                             [GPUJIT_PCH_STATUS_USED] = 4};
  return (unsigned)s < sizeof(rank) / sizeof(rank[0]) ? rank[s] : 0;
}

static void join_options(gpujit__buf *out, const gpujit__strvec *flags)
{
  for (size_t i = 0; i < flags->count; i++) {
    if (strncmp(flags->items[i], "--fdevice-time-trace", 20) == 0)
      continue; /* only affects the trace */
    if (out->len)
      gpujit__buf_puts(out, " ");
    gpujit__buf_puts(out, flags->items[i]);
  }
}

/* Compile one source; `wrapped` holds it with its #line prefix. With `deps`, what NVRTC probed
 * is added to it. */
static int compile_one(gpujit__nvrtc_result *res, const gpujit_module_options *o, const char *arch,
                       const char *target, const char *path, const char *wrapped, bool lto, gpujit_output_kind output,
                       const char *const *exprs, size_t exprs_count, double *phase_ms, gpujit__profile *profile,
                       gpujit__compile_deps *deps, gpujit__pch *pch)
{
  gpujit__nvrtc_request req = {0};
  gpujit_trace *trace = o->trace;
  char trace_base[4096], name[512];
  const char *trace_file = NULL;
  gpujit__strvec flags = {0};
  gpujit__stage stage;
  char *dir = gpujit__dirname(path);
  double t0;
  int err;

  if (!dir)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (gpujit__trace_wants_nvrtc(trace) && gpujit__trace_nvrtc_path(trace, trace_base, sizeof(trace_base)) == 0)
    trace_file = trace_base;
  if ((err = gpujit__nvrtc_flags(&flags, o, arch, dir, lto || output == GPUJIT_OUTPUT_LTOIR, trace_file)) < 0)
    goto done;
  snprintf(name, sizeof(name), "compile %s", gpujit__basename(path));
  gpujit__stage_begin(&stage, trace, name);
  if (trace) {
    gpujit__buf joined = {0};
    gpujit__stage_arg_str(&stage, "file", path);
    gpujit__stage_arg_str(&stage, "arch", target); /* the module's; NVRTC's own is in the options */
    join_options(&joined, &flags);
    gpujit__stage_arg_str(&stage, "options", joined.data);
    gpujit__stage_arg_num(&stage, "source_bytes", (double)strlen(wrapped));
    gpujit__buf_free(&joined);
  }
  t0 = gpujit__now_us();
  req.source = wrapped;
  req.program_name = path;
  req.flags = &flags;
  req.name_exprs = exprs;
  req.name_exprs_count = exprs_count;
  req.output = lto ? GPUJIT_OUTPUT_LTOIR : output;
  req.prelude = o->prelude && *o->prelude && o->line_directives ? o->prelude : NULL;
  req.pch = pch;
  err = gpujit__nvrtc_compile(res, &req);
  for (size_t k = 0; deps && k < res->observed.count; k++) /* `#pragma once` sees one program at a time */
    res->observed.items[k].programs = deps->program;
  if (err == 0 && deps && gpujit__observed_merge(&deps->observed, &res->observed) < 0)
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (trace_file) { /* read (and delete) NVRTC's own file also when the compile failed */
    gpujit__buf text = {0};
    char *failure = err < 0 ? gpujit__strdup(gpujit_error_last()) : NULL;
    double t1 = gpujit__now_us();
    if (gpujit__nvrtc_trace_take(&text, trace_file) == 0) {
      /* The profile a cache entry keeps; a trace it cannot read only loses the profile. */
      if (profile && err == 0 && gpujit__profile_add_nvrtc(profile, text.data, text.len) < 0) {
        gpujit__log(GPUJIT_LOG_DEBUG, "no compile profile for %s: %s", path, gpujit_error_last());
        gpujit_error_clear();
      }
      gpujit__trace_merge_nvrtc_text(trace, &text, t0, t1, phase_ms);
    } else
      gpujit_error_clear();
    gpujit__buf_free(&text);
    if (failure) /* the compile's error, not the missing trace of a failed compile */
      gpujit__error(err, "%s", failure);
    free(failure);
  }
  gpujit__stage_arg_str(&stage, "status", err < 0 ? "error" : "ok");
  gpujit__stage_arg_num(&stage, "image_bytes", (double)res->image.len);
  gpujit__stage_arg_str(&stage, "pch", gpujit_pch_status_name(pch->status));
  if (pch->reason[0])
    gpujit__stage_arg_str(&stage, "pch_reason", pch->reason);
  if (pch->retried)
    gpujit__stage_arg_num(&stage, "pch_heap_bytes", (double)pch->heap_bytes);
  {
    double ms = gpujit__stage_end(&stage);
    if (profile) /* the same span a trace of this compile shows */
      profile->compile_us += ms * 1e3;
  }
done:
  gpujit__strvec_free(&flags);
  free(dir);
  return err;
}

/*
 * In a multi-file module a name expression belongs to the source that defines its template:
 * the first source whose text contains the expression's leading identifier.
 */
static size_t owner_of(const char *expr, const gpujit_source *sources, size_t count)
{
  char ident[256];
  size_t n = 0;
  while (*expr == '&' || *expr == ' ' || *expr == ':')
    expr++;
  while (expr[n] && expr[n] != '<' && expr[n] != '(' && expr[n] != ' ' && n < sizeof(ident) - 1) {
    ident[n] = expr[n];
    n++;
  }
  ident[n] = '\0';
  if (count == 1 || n == 0)
    return 0;
  for (size_t i = 0; i < count; i++) {
    if (memmem(sources[i].data, sources[i].size, ident, n))
      return i;
  }
  return 0;
}

static int append_log(gpujit__buf *log, const char *path, const gpujit__buf *part)
{
  if (!part->len)
    return 0;
  if (log->len && gpujit__buf_puts(log, "\n") < 0)
    return GPUJIT_ENOMEM;
  if (path && gpujit__buf_printf(log, "== %s ==\n", path) < 0)
    return GPUJIT_ENOMEM;
  return gpujit__buf_put(log, part->data, part->len);
}

/* nvJitLink -time writes "what: milliseconds" lines: the report is one arg, each line a number too. */
static void link_report_args(gpujit__stage *stage, const char *report)
{
  const char *line = report;
  gpujit__stage_arg_str(stage, "nvjitlink_info", report);
  while (line && *line) {
    const char *colon = strchr(line, ':'), *eol = strchr(line, '\n');
    if (colon && (!eol || colon < eol)) {
      char key[128], *end;
      double ms = strtod(colon + 1, &end);
      if (end != colon + 1) {
        snprintf(key, sizeof(key), "%.*s (ms)", (int)(colon - line), line);
        gpujit__stage_arg_num(stage, key, ms);
      }
    }
    line = eol ? eol + 1 : NULL;
  }
}

/*
 * The files the compile reads besides its sources, for the PCH's staleness check (NVRTC never
 * checks whether a PCH's headers changed): the cache's include scan when there is one, else a
 * scan of our own — made only when a PCH is about to be made or used, once per module.
 */
typedef struct pch_files {
  const gpujit__compile_deps *deps;
  const gpujit_module *m;
  const gpujit_source *sources;
  size_t count;
  const gpujit_module_options *opts;
  gpujit__includes *own;
  const char **list;
  size_t n;
  bool done;
} pch_files;

static const char *const *pch_headers(void *ctx, size_t *n)
{
  pch_files *f = ctx;
  const gpujit__includes *inc = f->deps ? f->deps->inc : NULL;
  if (!f->done) {
    f->done = true;
    if (!inc) {
      gpujit__stage stage;
      gpujit__stage_begin(&stage, f->opts->trace, "scan includes");
      if (gpujit__includes_scan(&f->own, f->sources, (const char *const *)f->m->sources.items, f->count, f->opts) < 0)
        gpujit_error_clear();
      if (f->own)
        gpujit__stage_arg_num(&stage, "headers", (double)gpujit__includes_count(f->own));
      gpujit__stage_end(&stage);
      inc = f->own;
    }
    if (inc && !gpujit__includes_needs_trace(inc, NULL) &&
        (f->list = calloc(gpujit__includes_count(inc) + 1, sizeof(*f->list))))
      for (size_t i = 0; i < gpujit__includes_count(inc); i++)
        f->list[f->n++] = gpujit__includes_path(inc, i, NULL, NULL);
  }
  *n = f->n;
  return f->list;
}

/* The text of the user's headers NVRTC was seen to read, for the lean pass; NULL when what it
 * read is not known. Read again here: one changed since is caught when the record is made.
 * Whether the cache can keep a record of the compile is no matter here: a record refused (a
 * header changed during the compile, a probe's answer no record replays, one too new) still
 * names every file read, and the same inputs make the same module whatever the cache decides. */
static gpujit__buf *user_headers(const gpujit__observed *o, size_t *n)
{
  gpujit__buf *h = calloc(o->count + 1, sizeof(*h));
  const char *pch = gpujit__pch_dir_if_made();
  *n = 0;
  if (!h || o->reads_lost || gpujit__observe_unavailable()) {
    free(h);
    return NULL;
  }
  for (size_t i = 0; i < o->count; i++) {
    const gpujit__probe *p = &o->items[i];
    if (!p->read || p->written || p->library || p->kind != GPUJIT__PROBE_FILE || gpujit__in_toolkit(p->path) ||
        (pch && gpujit__path_under(p->path, pch)))
      continue;
    if (gpujit__file_read(&h[*n], p->path) < 0) {
      gpujit_error_clear();
      for (size_t k = 0; k < *n; k++)
        gpujit__buf_free(&h[k]);
      free(h);
      return NULL;
    }
    (*n)++;
  }
  return h;
}

/* The virtual arch of a real one: NVRTC makes PTX for it, ptxas runs later (sm_90a → compute_90a). */
static void virtual_arch(char *out, size_t size, const char *arch)
{
  if (strncmp(arch, "sm_", 3) == 0)
    snprintf(out, size, "compute_%s", arch + 3);
  else
    snprintf(out, size, "%s", arch);
}

/* One module's compile: its sources, what NVRTC made of each, the log so far. */
typedef struct compile_job {
  gpujit_module *m;
  const gpujit_source *sources;
  size_t count;
  const gpujit_module_options *opts;
  gpujit__compile_deps *deps;
  bool pch_more, lto, lean;
  char nvrtc_arch[40];            /* lean and one source: NVRTC's virtual arch, ptxas later */
  gpujit__nvrtc_result *results;  /* one per source */
  pch_files files;
  gpujit__buf wrapped, log;
} compile_job;

/* Loading NVRTC (on the first compile of a process) is a stage of its own: ~7 ms. */
static int load_nvrtc(const compile_job *j)
{
  gpujit__stage stage;
  int err;
  gpujit__stage_begin(&stage, j->opts->trace, "load NVRTC");
  err = gpujit__check_arch_supported(j->m->arch);
  gpujit__stage_end(&stage);
  if (err == 0)
    gpujit__lean_warn_no_ptxas(j->opts, j->m->output); /* NVRTC is there: now a missing ptxas is worth saying */
  return err;
}

/* A module reports the PCH status of its best source. */
static void note_pch(gpujit_module *m, const gpujit__pch *pch, bool first)
{
  struct stat st;
  if (!first && pch_rank(pch->status) <= pch_rank(m->pch))
    return;
  m->pch = pch->status;
  snprintf(m->pch_reason, sizeof(m->pch_reason), "%s", pch->reason);
  m->pch_bytes = pch->status == GPUJIT_PCH_STATUS_CREATED && pch->file[0] && stat(pch->file, &st) == 0
                     ? (double)st.st_size
                     : pch->status == GPUJIT_PCH_STATUS_USED ? (double)pch->heap_bytes : 0;
}

/* Source i through NVRTC, with the name expressions it owns; its log appended to the module's. */
static int compile_source(compile_job *j, size_t i)
{
  const gpujit_module_options *opts = j->opts;
  gpujit_module *m = j->m;
  const char **exprs = calloc(opts->name_expressions_count + 1, sizeof(*exprs));
  size_t n = 0;
  int err;
  if (!exprs)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t k = 0; k < opts->name_expressions_count; k++)
    if (owner_of(opts->name_expressions[k], j->sources, j->count) == i)
      exprs[n++] = opts->name_expressions[k];
  err = wrap_source(&j->wrapped, opts->line_directives ? NULL : opts->prelude, j->sources[i].data, j->sources[i].size);
  if (err == 0) {
    gpujit__pch pch = {.mode = opts->pch, .more_expected = j->pch_more, .headers = pch_headers,
                       .headers_ctx = &j->files};
    j->deps->program = j->lto ? 1u << (i % 32) : 0;
    /* lean: NVRTC stops at PTX; ptxas runs after the lean pass */
    err = compile_one(&j->results[i], opts, j->nvrtc_arch[0] ? j->nvrtc_arch : m->arch, m->arch,
                      m->sources.items[i], j->wrapped.data, j->lto, j->lean ? GPUJIT_OUTPUT_PTX : m->output, exprs, n,
                      m->phase_ms, m->profile, j->deps, &pch);
    note_pch(m, &pch, i == 0);
  }
  free(exprs);
  if (append_log(&j->log, j->count > 1 ? m->sources.items[i] : NULL, &j->results[i].log) < 0)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (err < 0)
    gpujit__error_set_log(j->log.data); /* the full log, every file so far */
  return err;
}

/* Several sources: their LTO-IR linked by nvJitLink (a stage, with its report when traced). */
static int link_sources(compile_job *j)
{
  gpujit_module *m = j->m;
  gpujit_trace *trace = j->opts->trace;
  gpujit__buf link_log = {0};
  gpujit__buf *inputs = calloc(j->count, sizeof(*inputs));
  gpujit__stage stage;
  int err;
  if (!inputs)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t i = 0; i < j->count; i++)
    inputs[i] = j->results[i].image;
  gpujit__stage_begin(&stage, trace, "link (nvJitLink)");
  /* what nvJitLink reads of the environment is the entry's as NVRTC's is */
  err = gpujit__link(&m->image, &link_log, inputs, (const char *const *)m->sources.items, j->count, j->opts, m->arch,
                     j->lean ? GPUJIT_OUTPUT_PTX : m->output, trace != NULL, &j->deps->observed);
  gpujit__stage_arg_str(&stage, "arch", m->arch);
  gpujit__stage_arg_num(&stage, "inputs", (double)j->count);
  gpujit__stage_arg_num(&stage, "image_bytes", (double)m->image.len);
  if (trace && link_log.len)
    link_report_args(&stage, link_log.data);
  m->timings.link_ms = gpujit__stage_end(&stage);
  gpujit__profile_phase(m, "link", m->timings.link_ms);
  free(inputs);
  if (err == 0)
    append_log(&j->log, "nvJitLink", &link_log);
  gpujit__buf_free(&link_log);
  return err;
}

/* Each name expression's lowered name, from the source that owns it, in the order given. */
static int lowered_names(compile_job *j)
{
  size_t *next = calloc(j->count, sizeof(*next)); /* per source: its next lowered name */
  int err = 0;
  if (!next)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t k = 0; k < j->opts->name_expressions_count && err == 0; k++) {
    size_t owner = owner_of(j->opts->name_expressions[k], j->sources, j->count);
    err = gpujit__strvec_push(&j->m->lowered, j->results[owner].lowered.items[next[owner]++]);
  }
  free(next);
  return err;
}

/* The lean path: the PTX made, the pass over it with the user's headers, ptxas. */
static int lean_pass(compile_job *j)
{
  gpujit__buf ptx = j->m->image;
  size_t nheaders = 0;
  gpujit__buf *headers;
  int err;
  memset(&j->m->image, 0, sizeof(j->m->image));
  headers = user_headers(&j->deps->observed, &nheaders);
  err = gpujit__lean_assemble(j->m, &ptx, j->sources, j->count, headers, nheaders, j->opts, &j->log);
  for (size_t k = 0; headers && k < nheaders; k++)
    gpujit__buf_free(&headers[k]);
  free(headers);
  gpujit__buf_free(&ptx);
  return err; /* nvJitLink's log is the error's */
}

/* A cached build whose NVRTC cannot be observed: nothing would stop NVRTC opening a FIFO header
 * and waiting on it for ever, so the include scan (pch_headers) looks first and refuses one. An
 * observed compile's wrappers refuse it themselves. */
static int refuse_unobserved(compile_job *j)
{
  size_t n;
  const gpujit__includes *inc;
  if (!j->files.deps || !gpujit__observe_unavailable())
    return 0;
  (void)pch_headers(&j->files, &n);
  inc = j->files.deps->inc ? j->files.deps->inc : j->files.own;
  return gpujit__includes_refused(inc) ? gpujit__error(GPUJIT_EIO, "%s", gpujit__includes_refused(inc)) : 0;
}

/* Every source compiled, linked or taken as the image, names lowered, the lean pass, kernels. */
static int compile_job_run(compile_job *j)
{
  gpujit_module *m = j->m;
  double t0;
  int err;
  virtual_arch(j->nvrtc_arch, sizeof(j->nvrtc_arch), j->lean && !j->lto ? m->arch : "");
  /* A traced compile keeps its profile: the cache entry records it for the traces of its hits. */
  if (gpujit__trace_wants_nvrtc(j->opts->trace) && !m->profile && !(m->profile = calloc(1, sizeof(*m->profile))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((err = load_nvrtc(j)) < 0 || (err = refuse_unobserved(j)) < 0)
    return err;
  t0 = gpujit__now_us();
  for (size_t i = 0; i < j->count; i++)
    if ((err = compile_source(j, i)) < 0)
      return err;
  m->timings.compile_ms = (gpujit__now_us() - t0) / 1e3;
  if (j->lto && (err = link_sources(j)) < 0)
    return err;
  if (!j->lto) {
    m->image = j->results[0].image;
    memset(&j->results[0].image, 0, sizeof(j->results[0].image));
  }
  if ((err = lowered_names(j)) < 0 || (j->lean && (err = lean_pass(j)) < 0))
    return err;
  if ((err = gpujit__image_kernels(&m->kernels, m->image.data, m->image.len, m->output)) < 0)
    return err;
  if (!(m->log = gpujit__strdup(j->log.data ? j->log.data : "")))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  return 0;
}

int gpujit__compile_module(gpujit_module *m, const gpujit_source *sources, size_t count,
                           const gpujit_module_options *opts, gpujit__compile_deps *deps, bool pch_more)
{
  gpujit__compile_deps own = {0}; /* an uncached build observes too: the lean pass reads what it saw */
  compile_job j = {.m = m, .sources = sources, .count = count, .opts = opts, .deps = deps ? deps : &own,
                   .pch_more = pch_more, .lto = count > 1, .lean = gpujit__lean_applies(opts, m->output)};
  int err;
  j.files = (pch_files){deps, m, sources, count, opts, NULL, NULL, 0, false};
  if (!(j.results = calloc(count, sizeof(*j.results))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  err = compile_job_run(&j);
  for (size_t i = 0; i < count; i++)
    gpujit__nvrtc_result_free(&j.results[i]);
  free(j.results);
  gpujit__buf_free(&j.wrapped);
  gpujit__buf_free(&j.log);
  free(j.files.list);
  gpujit__includes_free(j.files.own);
  gpujit__observed_free(&own.observed);
  return err;
}
