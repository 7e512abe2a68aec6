/* The build pipeline, in one place: read, resolve the target, key and look up, compile on a
 * miss, store; every stage's span and time is taken here (module/stage.h). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "cache/records/groups.h"
#include "cache/records/head_start.h"
#include "cache/store/key.h"
#include "cache/records/manifests.h"
#include "cache/store/store.h"
#include "compile/nvrtc/options.h"
#include "compile/toolkit/toolkit.h"
#include "driver/driver.h"
#include "driver/identity.h"
#include "module/build.h"
#include "module/cached.h"
#include "module/compiler.h"
#include "module/history.h"
#include "module/module.h"
#include "module/stage.h"

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
 * The GPU's arch from a record in the cache, keyed by what identifies the driver and the GPUs
 * without starting the driver (driver/identity.c): asking the driver costs ~150-230 ms of cuInit,
 * every process. No record (or no identity): ask the driver and keep its answer.
 */
static int gpu_arch(char *out, size_t size, gpujit_cache *cache)
{
  gpujit__buf id = {0}, note = {0};
  gpujit__hasher *h = NULL;
  gpujit__key key;
  int err;
  if (!cache || gpujit__driver_identity(&id) < 0 || !(h = gpujit__hasher_new())) {
    gpujit__buf_free(&id);
    gpujit_error_clear();
    return gpujit__driver_arch(out, size);
  }
  gpujit__hasher_field(h, "identity", id.data, id.len);
  gpujit__hasher_digest(h, &key);
  gpujit__hasher_free(h);
  if (gpujit__cache_note_get(cache, "arch", key.hex, &note) == 0 && note.data) {
    note.data[strcspn(note.data, "\n")] = '\0'; /* the arch; the identity follows, for people */
    if (strlen(note.data) < size && gpujit__check_arch_syntax(note.data) == 0) {
      snprintf(out, size, "%s", note.data);
      err = 0;
      goto done;
    }
  }
  gpujit_error_clear();
  if ((err = gpujit__driver_arch(out, size)) == 0) {
    gpujit__buf text = {0};
    if (gpujit__buf_printf(&text, "%s\n%s", out, id.data) == 0 &&
        gpujit__cache_note_put(cache, "arch", key.hex, text.data, text.len) < 0)
      gpujit_error_clear();
    gpujit__buf_free(&text);
  }
done:
  gpujit__buf_free(&note);
  gpujit__buf_free(&id);
  return err;
}

/* The target arch: asked for, else $GPUJIT_ARCH, else the GPU's, else GPUJIT_DEFAULT_ARCH. */
int gpujit__resolve_arch(char *out, size_t size, const char *arch, gpujit_cache *cache)
{
  const char *env;
  if (arch) {
    snprintf(out, size, "%s", arch);
    return 0;
  }
  env = getenv("GPUJIT_ARCH");
  if (env && *env) {
    int err = gpujit__check_arch_syntax(env);
    if (err < 0) /* the variable, not an --arch the caller did not give */
      return gpujit__error(err, "invalid GPUJIT_ARCH '%s': expected sm_XX or compute_XX (e.g. sm_90, compute_90)", env);
    snprintf(out, size, "%s", env);
    return 0;
  }
  if (gpu_arch(out, size, cache) == 0)
    return 0;
  gpujit_error_clear();
  snprintf(out, size, "%s", GPUJIT_DEFAULT_ARCH);
  return 0;
}

const char *gpujit_default_arch(void)
{
  static _Thread_local char arch[32];
  gpujit__resolve_arch(arch, sizeof(arch), NULL, NULL);
  return arch;
}

/* The module's facts before anything is looked up: its arch and output kind (checked against
 * each other and the sources), name, name expressions and the sources' absolute paths. */
static int prepare(gpujit_module *m, const gpujit_source *sources, size_t count, const gpujit_module_options *opts)
{
  int err;
  if ((err = gpujit__resolve_arch(m->arch, sizeof(m->arch), opts->arch, opts->cache)) < 0)
    return err;
  m->output = gpujit__resolve_output(m->arch, opts->output);
  if (m->output == GPUJIT_OUTPUT_CUBIN && strncmp(m->arch, "compute_", 8) == 0)
    return gpujit__error(GPUJIT_EINVAL, "a cubin needs a real arch (sm_XX), not '%s'", m->arch);
  if (m->output == GPUJIT_OUTPUT_LTOIR && count > 1)
    return gpujit__error(GPUJIT_EINVAL, "LTO-IR output takes one source; %zu given", count);
  if (!(m->name = gpujit__stem(sources[0].name)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t i = 0; i < opts->name_expressions_count; i++)
    if ((err = gpujit__strvec_push(&m->name_exprs, opts->name_expressions[i])) < 0)
      return err;
  for (size_t i = 0; i < count; i++) {
    char *abs = gpujit__abspath(sources[i].name);
    err = abs ? gpujit__strvec_push(&m->sources, abs) : gpujit__error(GPUJIT_ENOMEM, "out of memory");
    free(abs);
    if (err < 0)
      return err;
  }
  return 0;
}

/*
 * The cache's side before compiling: the lookup, the remote stores, then — a miss — the request's
 * lock (another process may be compiling it), a second lookup, and the include scan. *served: the
 * module came from a cache. A lookup-only build ends at the miss (GPUJIT_ENOENT, ctl->missed).
 */
static int look_up(gpujit_module *m, gpujit__miss *miss, const gpujit_source *sources, size_t count,
                   const gpujit_module_options *opts, gpujit__build_ctl *ctl, int *lock_fd, bool *served)
{
  gpujit__stage stage;
  int err;
  *served = false;
  if (!opts->cache) {
    ctl->missed = ctl->missed || ctl->lookup_only;
    return ctl->lookup_only ? GPUJIT_ENOENT : 0;
  }
  if ((err = gpujit__cached_lookup(m, miss, sources, count, opts)) != GPUJIT_ENOENT) {
    *served = err == 0; /* a hit, or an error */
    return err;
  }
  if ((err = gpujit__cached_fetch(m, miss, opts)) == 0) {
    *served = true; /* a remote hit, verified and now local */
    return 0;
  }
  ctl->missed = true;
  snprintf(ctl->miss_reason, sizeof(ctl->miss_reason), "%s", m->miss_reason);
  if (ctl->lookup_only)
    return err;
  gpujit__cache_count_miss(opts->cache);
  /* Processes building the same request take turns; whoever comes second usually hits. */
  gpujit__stage_begin(&stage, opts->trace, "wait for key lock");
  gpujit__cache_lock(opts->cache, miss->request.hex, lock_fd);
  m->timings.lookup_ms += gpujit__stage_end(&stage);
  if (*lock_fd >= 0 && gpujit__cached_lookup(m, miss, sources, count, opts) == 0) {
    *served = true;
    return 0;
  }
  return gpujit__cached_scan(miss, m, sources, count, opts);
}

/* After compiling: the compile time kept for planning, the entry stored (a failed store is a
 * warning: the module is good, only the cache lacks it); ctl's hook told the module is made. */
static void store(gpujit_module *m, gpujit__miss *miss, const gpujit_source *sources, size_t count,
                  const gpujit_module_options *opts, gpujit__build_ctl *ctl)
{
  gpujit__built_hook hook = {ctl->built, ctl->built_payload, false};
  gpujit__stage stage;
  if (!opts->cache) {
    if (ctl->built)
      ctl->built(m, ctl->built_payload);
    return;
  }
  gpujit__history_put(opts->cache, (const char *const *)m->sources.items, count, m->arch,
                      m->timings.compile_ms + m->timings.link_ms);
  gpujit__stage_begin(&stage, opts->trace, "cache store");
  if (gpujit__cached_store(miss, m, sources, count, opts, &hook) < 0)
    gpujit_error_clear();
  m->timings.store_ms = gpujit__stage_end(&stage);
}

/* The check of the shared group these sources used last time, begun now (cache/records/head_start.c): the
 * arch and the key take as long as the check where a library's headers are included. */
static gpujit__head *head_start(const gpujit_source *sources, size_t count, const gpujit_module_options *opts)
{
  gpujit__hasher *h;
  gpujit__key hint;
  if (!opts->cache || !(h = gpujit__hasher_new()))
    return NULL;
  for (size_t i = 0; i < count; i++)
    gpujit__hasher_field(h, "source", sources[i].data, sources[i].size);
  gpujit__hasher_digest(h, &hint);
  gpujit__hasher_free(h);
  return gpujit__group_head_start(opts->cache, hint.hex);
}

/* The build's own stage, named for what it is: a project's lookups in its coordinating process
 * are not builds (a miss goes to a worker). */
static void stage_begin(gpujit__stage *st, const gpujit_module *m, size_t count, const gpujit_module_options *opts,
                        const gpujit__build_ctl *ctl)
{
  char name[512];
  snprintf(name, sizeof(name), "%s %s", ctl->lookup_only ? "look up" : "build", m->name);
  gpujit__stage_begin(st, opts->trace, name);
  gpujit__stage_arg_str(st, "module", m->name);
  gpujit__stage_arg_str(st, "arch", m->arch);
  gpujit__stage_arg_num(st, "sources", (double)count);
}

static void stage_end(gpujit__stage *st, const gpujit_module *m, int err)
{
  if (!st->span)
    return;
  gpujit__stage_arg_str(st, "status", err < 0 ? gpujit_error_name(err) : "ok");
  gpujit__stage_arg_str(st, "cache",
                        m && m->cache_status == GPUJIT_CACHE_HIT    ? "hit"
                        : m && m->cache_status == GPUJIT_CACHE_MISS ? "miss"
                                                                    : "none");
  gpujit__stage_end(st);
}

static int build(gpujit_module **out, const gpujit_source *sources, size_t count,
                 const gpujit_module_options *caller_opts, double t_start, double read_ms, gpujit__build_ctl *ctl)
{
  gpujit__build_ctl no_ctl = {0};
  gpujit_module_options current;
  const gpujit_module_options *opts = &current;
  gpujit_module *m = NULL;
  gpujit__miss miss = {0};
  gpujit__stage build_stage = {0};
  gpujit__head *head = NULL;
  bool served = false;
  int err, lock_fd = -1;

  if (!ctl)
    ctl = &no_ctl;
  if ((err = gpujit_module_options_validate(caller_opts)) < 0)
    return err;
  if ((err = gpujit__toolkit_check()) < 0) /* a root named that holds no toolkit: before any lookup or warning */
    return err;
  gpujit__options_current(&current, caller_opts);
  if (!(m = gpujit__module_new()))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  miss.head = head = head_start(sources, count, opts);
  if ((err = prepare(m, sources, count, opts)) < 0)
    goto done;
  stage_begin(&build_stage, m, count, opts, ctl);
  if ((err = look_up(m, &miss, sources, count, opts, ctl, &lock_fd, &served)) < 0 || served)
    goto done;
  if ((err = gpujit__compile_module(m, sources, count, opts, opts->cache ? &miss.deps : NULL, ctl->pch_more)) < 0)
    goto done;
  store(m, &miss, sources, count, opts, ctl);
done:
  gpujit__head_end(head);
  gpujit__cache_unlock(lock_fd);
  gpujit__miss_free(&miss);
  stage_end(&build_stage, m, err);
  if (err < 0) {
    gpujit_module_free(m);
    if (err == GPUJIT_ENOENT && ctl->lookup_only && ctl->missed)
      gpujit_error_clear();
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
  return build(out, sources, count, opts, t0, 0, NULL);
}

int gpujit_module_build_files(gpujit_module **out, const char *const *paths, size_t count,
                              const gpujit_module_options *opts)
{
  return gpujit__module_build_files_ctl(out, paths, count, opts, NULL);
}

int gpujit__module_build_files_ctl(gpujit_module **out, const char *const *paths, size_t count,
                                   const gpujit_module_options *opts, gpujit__build_ctl *ctl)
{
  double t0 = gpujit__now_us(), read_ms;
  gpujit__buf *bufs = NULL;
  gpujit_source *sources = NULL;
  gpujit__stage stage;
  int err = 0;

  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_module_build_files: NULL out");
  *out = NULL;
  if (!paths || count == 0)
    return gpujit__error(GPUJIT_EINVAL, "no source files given");
  if (opts && (opts->version > GPUJIT_MODULE_OPTIONS_VERSION || opts->version < 1))
    return gpujit_module_options_validate(opts);
  bufs = calloc(count, sizeof(*bufs));
  sources = calloc(count, sizeof(*sources));
  if (!bufs || !sources) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  gpujit__stage_begin(&stage, opts ? opts->trace : NULL, "read sources");
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
  gpujit__stage_arg_num(&stage, "files", (double)count);
  gpujit__stage_end(&stage);
  read_ms = (gpujit__now_us() - t0) / 1e3;
  if (err == 0)
    err = build(out, sources, count, opts, t0, read_ms, ctl);
done:
  for (size_t i = 0; bufs && i < count; i++)
    gpujit__buf_free(&bufs[i]);
  free(bufs);
  free(sources);
  return err;
}
