/* The build pipeline: read sources, wrap them in #line, compile with NVRTC, link, list kernels. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "compile.h"
#include "module.h"
#include "trace_internal.h"

gpujit_module *gpujit__module_new(void) { return calloc(1, sizeof(gpujit_module)); }

void gpujit_module_free(gpujit_module *m)
{
  if (!m)
    return;
  free(m->name);
  gpujit__buf_free(&m->image);
  gpujit__strvec_free(&m->kernels);
  gpujit__strvec_free(&m->name_exprs);
  gpujit__strvec_free(&m->lowered);
  gpujit__strvec_free(&m->sources);
  free(m->log);
  free(m);
}

/* Reject what cannot be CUDA C before NVRTC sees it. */
static int check_text(const char *name, const char *data, size_t size)
{
  size_t nonprint = 0;
  if (size == 0)
    return gpujit__error(GPUJIT_EPARSE, "%s: empty file", name);
  if (memchr(data, '\0', size))
    return gpujit__error(GPUJIT_EPARSE, "%s: binary file (contains NUL bytes), not CUDA C source", name);
  for (size_t i = 0; i < size && i < 4096; i++) {
    unsigned char c = (unsigned char)data[i];
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v')
      nonprint++;
  }
  if (nonprint > 8)
    return gpujit__error(GPUJIT_EPARSE, "%s: binary file (control characters), not CUDA C source", name);
  return 0;
}

/*
 * The program is named by the source's absolute path, so NVRTC's diagnostics and line table
 * name the user's file as they stand. Text that gpujit joins around user code (`prelude`) is
 * followed by `#line 1 "PATH"` so the user's lines keep their numbers; the directive is never
 * emitted when nothing is joined. (NVRTC 13.0 also aborts when a program with a #line
 * directive is compiled with --fdevice-time-trace after a different program of another name:
 * a reason more not to emit one needlessly.)
 */
static int wrap_source(gpujit__buf *out, const char *path, const char *prelude, const char *data,
                       size_t size, bool directives)
{
  int err;
  out->len = 0;
  if (prelude && *prelude) {
    if ((err = gpujit__buf_puts(out, prelude)) < 0 || (err = gpujit__buf_puts(out, "\n")) < 0)
      return err;
  }
  if (prelude && *prelude && directives) {
    if ((err = gpujit__buf_puts(out, "#line 1 \"")) < 0)
      return err;
    for (const char *p = path; *p; p++) {
      if ((*p == '"' || *p == '\\') && (err = gpujit__buf_put(out, "\\", 1)) < 0)
        return err;
      if ((err = gpujit__buf_put(out, p, 1)) < 0)
        return err;
    }
    if ((err = gpujit__buf_puts(out, "\"\n")) < 0)
      return err;
  }
  return gpujit__buf_put(out, data, size);
}

static char *module_name_of(const char *path)
{
  const char *base = gpujit__basename(path);
  const char *dot = strrchr(base, '.');
  return gpujit__strndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
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

/* Compile one source; `wrapped` holds it with its #line prefix. */
static int compile_one(gpujit__nvrtc_result *res, const gpujit_module_options *o, const char *arch,
                       const char *path, const char *wrapped, bool lto, gpujit_output_kind output,
                       const char *const *exprs, size_t exprs_count, double *phase_ms)
{
  gpujit_trace *trace = o->trace;
  char trace_base[4096];
  const char *trace_file = NULL;
  gpujit__strvec flags = {0};
  char *dir = gpujit__dirname(path);
  uint64_t span = 0;
  double t0;
  int err;

  if (!dir)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (gpujit__trace_wants_nvrtc(trace) && gpujit__trace_nvrtc_path(trace, trace_base, sizeof(trace_base)) == 0)
    trace_file = trace_base;
  if ((err = gpujit__nvrtc_flags(&flags, o, arch, dir, lto || output == GPUJIT_OUTPUT_LTOIR, trace_file)) < 0)
    goto done;
  if (trace) {
    gpujit__buf joined = {0};
    char name[512];
    snprintf(name, sizeof(name), "compile %s", gpujit__basename(path));
    gpujit_trace_span_begin(trace, &span, "gpujit", name);
    gpujit_trace_span_arg_str(trace, span, "file", path);
    gpujit_trace_span_arg_str(trace, span, "arch", arch);
    join_options(&joined, &flags);
    gpujit_trace_span_arg_str(trace, span, "options", joined.data ? joined.data : "");
    gpujit_trace_span_arg_num(trace, span, "source_bytes", (double)strlen(wrapped));
    gpujit__buf_free(&joined);
  }
  t0 = gpujit__now_us();
  err = gpujit__nvrtc_compile(res, wrapped, path, &flags, exprs, exprs_count,
                              lto ? GPUJIT_OUTPUT_LTOIR : output);
  if (trace_file) /* merge (and delete) NVRTC's own file also when the compile failed */
    gpujit__trace_merge_nvrtc(trace, trace_file, t0, gpujit__now_us(), phase_ms);
  if (trace) {
    gpujit_trace_span_arg_str(trace, span, "status", err < 0 ? "error" : "ok");
    gpujit_trace_span_arg_num(trace, span, "image_bytes", (double)res->image.len);
    gpujit_trace_span_end(trace, span);
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

/* NVRTC (and nvJitLink) for every source: the miss path. */
static int compile_module(gpujit_module *m, const gpujit_source *sources, size_t count,
                          const gpujit_module_options *opts)
{
  gpujit__nvrtc_result *results = calloc(count, sizeof(*results));
  gpujit__buf wrapped = {0}, log = {0};
  gpujit_trace *trace = opts->trace;
  bool lto = count > 1;
  int err = 0;

  if (!results)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((err = gpujit__check_arch_supported(m->arch)) < 0)
    goto done;
  {
    double t0 = gpujit__now_us();
    for (size_t i = 0; i < count; i++) {
      const char **exprs = calloc(opts->name_expressions_count + 1, sizeof(*exprs));
      size_t n = 0;
      if (!exprs) {
        err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
        goto done;
      }
      for (size_t k = 0; k < opts->name_expressions_count; k++)
        if (owner_of(opts->name_expressions[k], sources, count) == i)
          exprs[n++] = opts->name_expressions[k];
      err = wrap_source(&wrapped, m->sources.items[i], opts->prelude, sources[i].data, sources[i].size,
                        opts->line_directives);
      if (err == 0)
        err = compile_one(&results[i], opts, m->arch, m->sources.items[i], wrapped.data, lto, m->output,
                          exprs, n, m->phase_ms);
      free(exprs);
      if (append_log(&log, count > 1 ? m->sources.items[i] : NULL, &results[i].log) < 0) {
        err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
        goto done;
      }
      if (err < 0) {
        gpujit__error_set_log(log.data); /* the full log, every file so far */
        goto done;
      }
    }
    m->timings.compile_ms = (gpujit__now_us() - t0) / 1e3;
  }

  if (lto) {
    gpujit__buf link_log = {0};
    gpujit__buf *inputs = calloc(count, sizeof(*inputs));
    uint64_t link_span = 0;
    double t0 = gpujit__now_us();
    if (!inputs) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      goto done;
    }
    for (size_t i = 0; i < count; i++)
      inputs[i] = results[i].image;
    gpujit_trace_span_begin(trace, &link_span, "gpujit", "link (nvJitLink)");
    err = gpujit__link(&m->image, &link_log, inputs, (const char *const *)m->sources.items, count,
                       opts, m->arch, m->output, trace != NULL);
    m->timings.link_ms = (gpujit__now_us() - t0) / 1e3;
    if (trace) {
      gpujit_trace_span_arg_str(trace, link_span, "arch", m->arch);
      gpujit_trace_span_arg_num(trace, link_span, "inputs", (double)count);
      gpujit_trace_span_arg_num(trace, link_span, "image_bytes", (double)m->image.len);
      if (link_log.len) {
        /* nvJitLink -time writes "what: milliseconds" lines: each becomes a numeric arg too. */
        const char *line = link_log.data;
        gpujit_trace_span_arg_str(trace, link_span, "nvjitlink_info", link_log.data);
        while (line && *line) {
          const char *colon = strchr(line, ':'), *eol = strchr(line, '\n');
          if (colon && (!eol || colon < eol)) {
            char key[128], *end;
            double ms = strtod(colon + 1, &end);
            if (end != colon + 1) {
              snprintf(key, sizeof(key), "%.*s (ms)", (int)(colon - line), line);
              gpujit_trace_span_arg_num(trace, link_span, key, ms);
            }
          }
          line = eol ? eol + 1 : NULL;
        }
      }
      gpujit_trace_span_end(trace, link_span);
    }
    free(inputs);
    if (err == 0)
      append_log(&log, "nvJitLink", &link_log);
    gpujit__buf_free(&link_log);
    if (err < 0)
      goto done;
  } else {
    m->image = results[0].image;
    memset(&results[0].image, 0, sizeof(results[0].image));
  }
  {
    size_t *next = calloc(count, sizeof(*next)); /* per source: its next lowered name */
    if (!next) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      goto done;
    }
    for (size_t k = 0; k < opts->name_expressions_count && err == 0; k++) {
      size_t owner = owner_of(opts->name_expressions[k], sources, count);
      err = gpujit__strvec_push(&m->lowered, results[owner].lowered.items[next[owner]++]);
    }
    free(next);
    if (err < 0)
      goto done;
  }
  if ((err = gpujit__image_kernels(&m->kernels, m->image.data, m->image.len, m->output)) < 0)
    goto done;
  if (!(m->log = gpujit__strdup(log.data ? log.data : "")))
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
done:
  for (size_t i = 0; i < count; i++)
    gpujit__nvrtc_result_free(&results[i]);
  free(results);
  gpujit__buf_free(&wrapped);
  gpujit__buf_free(&log);
  return err;
}

/* Key and lookup; on a hit the module is complete and NVRTC was never touched. */
static int cache_lookup(gpujit_module *m, gpujit__key *key, gpujit__keyinfo *info,
                        const gpujit_source *sources, size_t count, const gpujit_module_options *opts)
{
  gpujit_trace *trace = opts->trace;
  uint64_t span = 0;
  double t0 = gpujit__now_us();
  int err;

  gpujit_trace_span_begin(trace, &span, "gpujit", "hash");
  err = gpujit__cache_key(key, info, opts->cache, sources, (const char *const *)m->sources.items, count,
                          opts, m->arch, m->output);
  if (trace && err == 0) {
    gpujit_trace_span_arg_str(trace, span, "key", key->hex);
    gpujit_trace_span_arg_num(trace, span, "files", (double)info->count);
  }
  gpujit_trace_span_end(trace, span);
  m->timings.hash_ms = (gpujit__now_us() - t0) / 1e3;
  if (err < 0)
    return err;
  snprintf(m->cache_key, sizeof(m->cache_key), "%s", key->hex);
  t0 = gpujit__now_us();
  gpujit_trace_span_begin(trace, &span, "gpujit", "cache lookup");
  err = gpujit__cache_lookup(opts->cache, key, m);
  gpujit_trace_span_arg_str(trace, span, "status", err == 0 ? "hit" : "miss");
  gpujit_trace_span_arg_str(trace, span, "key", key->hex);
  gpujit_trace_span_end(trace, span);
  m->timings.lookup_ms += (gpujit__now_us() - t0) / 1e3;
  m->cache_status = err == 0 ? GPUJIT_CACHE_HIT : GPUJIT_CACHE_MISS;
  return err;
}

static int build(gpujit_module **out, const gpujit_source *sources, size_t count,
                 const gpujit_module_options *opts, double t_start, double read_ms)
{
  gpujit_module_options defaults = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  gpujit_trace *trace;
  gpujit__key key;
  gpujit__keyinfo info = {0};
  uint64_t build_span = 0;
  int err, lock_fd = -1;

  if (!opts)
    opts = &defaults;
  trace = opts->trace;
  if ((err = gpujit_module_options_validate(opts)) < 0)
    return err;
  if (!(m = gpujit__module_new()))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((err = gpujit__resolve_arch(m->arch, sizeof(m->arch), opts->arch)) < 0)
    goto done;
  m->output = gpujit__resolve_output(m->arch, opts->output);
  if (m->output == GPUJIT_OUTPUT_CUBIN && strncmp(m->arch, "compute_", 8) == 0) {
    err = gpujit__error(GPUJIT_EINVAL, "a cubin needs a real arch (sm_XX), not '%s'", m->arch);
    goto done;
  }
  if (m->output == GPUJIT_OUTPUT_LTOIR && count > 1) {
    err = gpujit__error(GPUJIT_EINVAL, "LTO-IR output takes one source; %zu given", count);
    goto done;
  }
  if (!(m->name = module_name_of(sources[0].name))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < opts->name_expressions_count; i++)
    if ((err = gpujit__strvec_push(&m->name_exprs, opts->name_expressions[i])) < 0)
      goto done;
  for (size_t i = 0; i < count; i++) {
    char *abs = gpujit__abspath(sources[i].name);
    err = abs ? gpujit__strvec_push(&m->sources, abs) : gpujit__error(GPUJIT_ENOMEM, "out of memory");
    free(abs);
    if (err < 0)
      goto done;
  }
  if (trace) {
    char name[512];
    snprintf(name, sizeof(name), "build %s", m->name);
    gpujit_trace_span_begin(trace, &build_span, "gpujit", name);
    gpujit_trace_span_arg_str(trace, build_span, "module", m->name);
    gpujit_trace_span_arg_str(trace, build_span, "arch", m->arch);
    gpujit_trace_span_arg_num(trace, build_span, "sources", (double)count);
  }

  if (opts->cache) {
    if ((err = cache_lookup(m, &key, &info, sources, count, opts)) == 0)
      goto done; /* hit */
    if (err != GPUJIT_ENOENT)
      goto done;
    gpujit__cache_count_miss(opts->cache);
    /* Processes building the same key take turns; whoever comes second usually hits. */
    {
      uint64_t span = 0;
      double t0 = gpujit__now_us();
      gpujit_trace_span_begin(trace, &span, "gpujit", "wait for key lock");
      gpujit__cache_lock(opts->cache, &key, &lock_fd);
      gpujit_trace_span_end(trace, span);
      m->timings.lookup_ms += (gpujit__now_us() - t0) / 1e3;
    }
    if (lock_fd >= 0 && gpujit__cache_lookup(opts->cache, &key, m) == 0) {
      m->cache_status = GPUJIT_CACHE_HIT;
      err = 0;
      goto done;
    }
  }
  if ((err = compile_module(m, sources, count, opts)) < 0)
    goto done;
  if (opts->cache) {
    uint64_t span = 0;
    double t0 = gpujit__now_us();
    gpujit_trace_span_begin(trace, &span, "gpujit", "cache store");
    /* A failed store is a warning: the module is good, only the cache lacks it. */
    if (gpujit__cache_store(opts->cache, &key, m, &info, opts) < 0)
      gpujit_error_clear();
    gpujit_trace_span_end(trace, span);
    m->timings.store_ms = (gpujit__now_us() - t0) / 1e3;
  }

done:
  gpujit__cache_unlock(lock_fd);
  gpujit__keyinfo_free(&info);
  if (trace && build_span) {
    gpujit_trace_span_arg_str(trace, build_span, "status", err < 0 ? gpujit_error_name(err) : "ok");
    gpujit_trace_span_arg_str(trace, build_span, "cache",
                              m && m->cache_status == GPUJIT_CACHE_HIT    ? "hit"
                              : m && m->cache_status == GPUJIT_CACHE_MISS ? "miss"
                                                                          : "none");
    gpujit_trace_span_end(trace, build_span);
  }
  if (err < 0) {
    gpujit_module_free(m);
    return err;
  }
  m->timings.read_ms = read_ms;
  m->timings.total_ms = (gpujit__now_us() - t_start) / 1e3;
  *out = m;
  return 0;
}

int gpujit_module_build_sources(gpujit_module **out, const gpujit_source *sources, size_t count,
                                const gpujit_module_options *opts)
{
  double t0 = gpujit__now_us();
  int err;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_module_build_sources: NULL out");
  *out = NULL;
  if (!sources || count == 0)
    return gpujit__error(GPUJIT_EINVAL, "no sources given");
  for (size_t i = 0; i < count; i++) {
    if (!sources[i].name || !sources[i].name[0])
      return gpujit__error(GPUJIT_EINVAL, "source %zu has no name", i);
    if (!sources[i].data)
      return gpujit__error(GPUJIT_EINVAL, "%s: NULL data", sources[i].name);
    if ((err = check_text(sources[i].name, sources[i].data, sources[i].size)) < 0)
      return err;
  }
  return build(out, sources, count, opts, t0, 0);
}

int gpujit_module_build_files(gpujit_module **out, const char *const *paths, size_t count,
                              const gpujit_module_options *opts)
{
  double t0 = gpujit__now_us(), read_ms;
  gpujit_trace *trace = opts ? opts->trace : NULL;
  gpujit__buf *bufs = NULL;
  gpujit_source *sources = NULL;
  uint64_t span = 0;
  int err = 0;

  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_module_build_files: NULL out");
  *out = NULL;
  if (!paths || count == 0)
    return gpujit__error(GPUJIT_EINVAL, "no source files given");
  if (opts && opts->version != GPUJIT_MODULE_OPTIONS_VERSION)
    return gpujit_module_options_validate(opts);
  bufs = calloc(count, sizeof(*bufs));
  sources = calloc(count, sizeof(*sources));
  if (!bufs || !sources) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  gpujit_trace_span_begin(trace, &span, "gpujit", "read sources");
  for (size_t i = 0; i < count && err == 0; i++) {
    if (!paths[i] || !paths[i][0])
      err = gpujit__error(GPUJIT_EINVAL, "source path %zu is empty", i);
    else if ((err = gpujit__file_read(&bufs[i], paths[i])) == 0)
      err = check_text(paths[i], bufs[i].data ? bufs[i].data : "", bufs[i].len);
    if (err == 0) {
      sources[i].name = paths[i];
      sources[i].data = bufs[i].data;
      sources[i].size = bufs[i].len;
    }
  }
  gpujit_trace_span_arg_num(trace, span, "files", (double)count);
  gpujit_trace_span_end(trace, span);
  read_ms = (gpujit__now_us() - t0) / 1e3;
  if (err == 0)
    err = build(out, sources, count, opts, t0, read_ms);
done:
  for (size_t i = 0; bufs && i < count; i++)
    gpujit__buf_free(&bufs[i]);
  free(bufs);
  free(sources);
  return err;
}

const void *gpujit_module_image(const gpujit_module *m, size_t *size)
{
  if (size)
    *size = m ? m->image.len : 0;
  return m ? m->image.data : NULL;
}

const char *gpujit_output_kind_name(gpujit_output_kind k)
{
  switch (k) {
  case GPUJIT_OUTPUT_CUBIN: return "cubin";
  case GPUJIT_OUTPUT_PTX: return "ptx";
  case GPUJIT_OUTPUT_LTOIR: return "ltoir";
  default: return "auto";
  }
}

gpujit_output_kind gpujit_module_output(const gpujit_module *m) { return m ? m->output : GPUJIT_OUTPUT_AUTO; }
const char *gpujit_module_arch(const gpujit_module *m) { return m ? m->arch : NULL; }
const char *gpujit_module_name(const gpujit_module *m) { return m ? m->name : NULL; }
size_t gpujit_module_kernel_count(const gpujit_module *m) { return m ? m->kernels.count : 0; }

const char *gpujit_module_kernel(const gpujit_module *m, size_t i)
{
  return m && i < m->kernels.count ? m->kernels.items[i] : NULL;
}

const char *gpujit_module_lowered_name(const gpujit_module *m, const char *expr)
{
  if (!m || !expr)
    return NULL;
  for (size_t i = 0; i < m->name_exprs.count && i < m->lowered.count; i++)
    if (strcmp(m->name_exprs.items[i], expr) == 0)
      return m->lowered.items[i];
  return NULL;
}

int gpujit_module_kernel_params(const gpujit_module *m, const char *kernel, int *sizes, int max)
{
  if (!m || !kernel || !sizes || m->output != GPUJIT_OUTPUT_CUBIN)
    return -1;
  return gpujit__cubin_params(m->image.data, m->image.len, kernel, sizes, max);
}

size_t gpujit_module_name_expression_count(const gpujit_module *m) { return m ? m->name_exprs.count : 0; }

const char *gpujit_module_name_expression(const gpujit_module *m, size_t i, const char **lowered)
{
  if (lowered)
    *lowered = NULL;
  if (!m || i >= m->name_exprs.count)
    return NULL;
  if (lowered && i < m->lowered.count)
    *lowered = m->lowered.items[i];
  return m->name_exprs.items[i];
}

const char *gpujit_module_log(const gpujit_module *m) { return m && m->log ? m->log : ""; }

void gpujit_module_timings_get(const gpujit_module *m, gpujit_module_timings *out)
{
  if (!out)
    return;
  if (m) {
    *out = m->timings;
    out->front_end_ms = m->phase_ms[0];
    out->optimizer_ms = m->phase_ms[1];
    out->codegen_ms = m->phase_ms[2];
    out->ptxas_ms = m->phase_ms[3];
  } else {
    memset(out, 0, sizeof(*out));
  }
}

gpujit_cache_status gpujit_module_cache_status(const gpujit_module *m) { return m ? m->cache_status : GPUJIT_CACHE_NONE; }

const char *gpujit_module_cache_key(const gpujit_module *m)
{
  return m && m->cache_key[0] ? m->cache_key : NULL;
}

int gpujit_module_write(const gpujit_module *m, const char *path)
{
  if (!m || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_module_write: NULL argument");
  return gpujit__file_write_atomic(path, m->image.data ? m->image.data : "", m->image.len);
}
