/* The cache's side of a build. A lookup reads no header: the request key (sources, options,
 * toolkit, arch) names a manifest, and the manifest lists the builds made for that request with
 * the dependencies each had — the user's headers and failed lookups checked by stat every time,
 * the toolkit's once per lookup (or vouched for by the build server, which watches them). On a
 * miss the include scan (and, where it cannot follow the source, NVRTC's own record of the files
 * it opened) gives the next record. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/exchange/fleet.h"
#include "cache/records/head_start.h"
#include "cache/upkeep/limit.h"
#include "cache/records/manifests.h"
#include "cache/store/store.h"
#include "module/cached.h"
#include "module/deps.h"
#include "module/entry.h"
#include "module/explain.h"
#include "module/key.h"
#include "module/stage.h"

int gpujit__cached_lookup(gpujit_module *m, gpujit__miss *miss, const gpujit_source *sources, size_t count,
                          const gpujit_module_options *opts)
{
  gpujit__cache_extra profile = {.role = "profile"};
  gpujit__stage stage;
  gpujit__key entry;
  int err;

  *miss = (gpujit__miss){.head = miss->head}; /* the build's head start stays with it */
  gpujit__stage_begin(&stage, opts->trace, "hash");
  err = gpujit__module_key(&miss->request, NULL, gpujit__cache_base(opts->cache), sources,
                           (const char *const *)m->sources.items, count, opts, m->arch, m->output);
  if (err == 0)
    gpujit__stage_arg_str(&stage, "request", miss->request.hex);
  m->timings.hash_ms = gpujit__stage_end(&stage);
  if (err < 0)
    return err;
  gpujit__stage_begin(&stage, opts->trace, "cache lookup");
  {
    char why[PATH_MAX + 160] = "";
    err = gpujit__manifest_find_why(opts->cache, miss->request.hex, miss->head, entry.hex, why, sizeof(why));
    /* why it missed, as ninja -d explain says why it rebuilt: kept with the module, logged (-v)
     * once per request and thread; a build looks up again under its lock, and the first
     * lookup's reason stands */
    static __thread char said[33];
    if (err != 0 && why[0] && !m->miss_reason[0]) {
      char changed[1024] = "";
      cJSON *in;
      /* never built so: name what differs from this module's last build, field by field (a note
       * read and a key hashed again, on a miss only: the compile that follows costs far more) */
      if (!strncmp(why, GPUJIT__NEVER_BUILT, strlen(GPUJIT__NEVER_BUILT)) && (in = cJSON_CreateObject()) != NULL) {
        gpujit__key again;
        if (gpujit__module_key(&again, in, gpujit__cache_base(opts->cache), sources,
                               (const char *const *)m->sources.items, count, opts, m->arch, m->output) == 0 &&
            gpujit__explain_diff(opts->cache, m->name, (const char *const *)m->sources.items, count, in, changed,
                                 sizeof(changed)))
          snprintf(why, sizeof(why), "since its last build: %s", changed);
        cJSON_Delete(in);
      }
      if (strcmp(said, miss->request.hex) != 0)
        gpujit__log(GPUJIT_LOG_INFO, "%s: cache miss: %s", m->name, why);
      snprintf(said, sizeof(said), "%s", miss->request.hex);
      snprintf(m->miss_reason, sizeof(m->miss_reason), "%s", why);
    }
  }
  if (err == 0) {
    snprintf(m->cache_key, sizeof(m->cache_key), "%s", entry.hex);
    /* a traced hit replays the profile its entry recorded: read with the entry */
    err = gpujit__entry_lookup(opts->cache, &entry, m, opts->trace ? &profile : NULL);
  }
  gpujit__head_settle(miss->head); /* a check begun ahead and not joined: stopped (a miss compiles) */
  gpujit__stage_arg_str(&stage, "status", err == 0 ? "hit" : "miss");
  gpujit__stage_arg_str(&stage, "request", miss->request.hex);
  if (err == 0)
    gpujit__stage_arg_str(&stage, "key", entry.hex);
  m->timings.lookup_ms += gpujit__stage_end(&stage);
  if (err == 0 && opts->trace)
    gpujit__entry_replay_profile(&profile, m, opts->trace);
  gpujit__buf_free(&profile.data);
  m->cache_status = err == 0 ? GPUJIT_CACHE_HIT : GPUJIT_CACHE_MISS;
  if (err < 0)
    m->cache_key[0] = '\0';
  return err;
}

int gpujit__cached_fetch(gpujit_module *m, gpujit__miss *miss, const gpujit_module_options *opts)
{
  gpujit__cache_extra profile = {.role = "profile"};
  gpujit__stage stage;
  gpujit__key entry;
  int err;
  if (!gpujit__cache_has_remote(opts->cache))
    return GPUJIT_ENOENT;
  gpujit__stage_begin(&stage, opts->trace, "remote fetch");
  err = gpujit__cache_remote_fetch(opts->cache, miss->request.hex);
  if (err == 0 &&
      (err = gpujit__manifest_find_why(opts->cache, miss->request.hex, miss->head, entry.hex, NULL, 0)) == 0) {
    snprintf(m->cache_key, sizeof(m->cache_key), "%s", entry.hex);
    err = gpujit__entry_lookup(opts->cache, &entry, m, opts->trace ? &profile : NULL);
  }
  gpujit__stage_arg_str(&stage, "status", err == 0 ? "hit" : "miss");
  m->timings.lookup_ms += gpujit__stage_end(&stage);
  if (err == 0) {
    m->cache_status = GPUJIT_CACHE_HIT;
    gpujit__cache_remote_saved(opts->cache, m->timings.saved_ms);
    if (opts->trace)
      gpujit__entry_replay_profile(&profile, m, opts->trace);
  } else {
    m->cache_key[0] = '\0';
    gpujit_error_clear();
    err = GPUJIT_ENOENT;
  }
  return err;
}

int gpujit__cached_scan(gpujit__miss *miss, gpujit_module *m, const gpujit_source *sources, size_t count,
                        const gpujit_module_options *opts)
{
  (void)m, (void)sources, (void)count, (void)opts;
  /* before NVRTC's first look: a file modified since cannot stand for what it read */
  miss->deps.start = gpujit__deps_coarse_clock();
  /* No include scan here: the record is what the compile is seen to probe, and the observing
   * wrappers refuse a FIFO header. The scan (a prediction, for a PCH's plan) is made by the
   * compile when a PCH is about to be made or used, or when NVRTC cannot be observed
   * (module/compiler.c) — for CUB, scanning every miss cost 3-4 % of its compile. */
  return 0;
}

static void built(gpujit__built_hook *hook, gpujit_module *m)
{
  if (hook && hook->fn && !hook->called) {
    hook->called = true;
    hook->fn(m, hook->payload);
  }
}

/* Not cached, and why: under -v, and with the module's reason for its miss. */
static void uncached(gpujit_module *m, const char *why)
{
  size_t n = strlen(m->miss_reason);
  gpujit__log(GPUJIT_LOG_INFO, "%s: not cached: %s", m->name, why);
  snprintf(m->miss_reason + n, sizeof(m->miss_reason) - n, "%snot cached: %s", n ? "; " : "", why);
}

/*
 * The name a header's copy is dumped under: absolute and normalised, as the sources' are. NVRTC
 * names a header found through a relative -I (CMake's, Python's include_dirs) relative to the
 * working directory — "inc/h.h", "../x/h.h", "sub/../inc/h.h" — and the dump's member is
 * "src/" + this name, which must hold no "." or ".." component to pass an import's or a remote
 * bundle's checks. @return 0 (pushed onto `dumped`), 1 when that name is dumped already, or an error.
 */
static int dump_path(gpujit__strvec *dumped, const char *path, const char *const *paths, size_t count)
{
  char cwd[PATH_MAX], *abs;
  int err;
  if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
    return gpujit__error(GPUJIT_EIO, "the working directory: %s", strerror(errno));
  if (!(abs = malloc((path[0] == '/' ? 0 : strlen(cwd) + 1) + strlen(path) + 1)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  sprintf(abs, "%s%s%s", path[0] == '/' ? "" : cwd, path[0] == '/' ? "" : "/", path);
  gpujit__normpath(abs);
  for (size_t k = 0; k < count; k++)
    if (!strcmp(paths[k], abs)) {
      free(abs);
      return 1;
    }
  for (size_t k = 0; k < dumped->count; k++)
    if (!strcmp(dumped->items[k], abs)) {
      free(abs);
      return 1;
    }
  if ((err = gpujit__strvec_push(dumped, abs)) < 0) {
    free(abs);
    return err;
  }
  free(abs);
  return 0;
}

int gpujit__cached_store(gpujit__miss *miss, gpujit_module *m, const gpujit_source *sources, size_t count,
                         const gpujit_module_options *opts, gpujit__built_hook *hook)
{
  const char *base = gpujit__cache_base(opts->cache), *own;
  const char *const *paths = (const char *const *)m->sources.items;
  char why[600] = "";
  gpujit__observed_deps rec = {0};
  gpujit__cache_file *dump = NULL;
  gpujit__strvec dumped = {0}; /* the dump's paths, normalised: a member is never "a/../b" */
  gpujit__key entry;
  cJSON *inputs = NULL, *arr;
  size_t n = 0;
  int err = 0;

  /* The record is what NVRTC was seen to look at; where that cannot be seen, nothing is stored. */
  if (gpujit__observe_unavailable())
    snprintf(why, sizeof(why), "what NVRTC reads cannot be observed (%s)", gpujit__observe_unavailable());
  else if (miss->deps.observed.why[0])
    snprintf(why, sizeof(why), "%s", miss->deps.observed.why);
  else if ((err = gpujit__module_deps_observed(&rec, &miss->deps.observed, base, miss->deps.start, paths, count,
                                               gpujit__names_once(opts, sources, count), why, sizeof(why))) < 0)
    goto done;
  if (!why[0] && !gpujit__module_cacheable(opts, sources, paths, count, &rec, why, sizeof(why))) {
    m->uncacheable = true; /* never a hit: ccache's "uncacheable", not a miss */
    gpujit__cache_count_uncacheable(opts->cache);
  }
  if (why[0]) {
    uncached(m, why);
    goto done;
  }
  /* a build that names its own path holds its base directory where no relocation reaches */
  if (base && *base && (own = gpujit__names_own_path(opts, sources, count, &rec)) &&
      (err = gpujit__deps_add_pin(&rec.deps, base)) < 0)
    goto done;
  if ((err = gpujit__module_entry_key(&entry, &miss->request, &rec.deps, &rec.shared)) < 0)
    goto done;
  if (!(inputs = cJSON_CreateObject()) ||
      (err = gpujit__module_key(&miss->request, inputs, base, sources, paths, count, opts, m->arch, m->output)) < 0) {
    err = err ? err : gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  gpujit__explain_put(opts->cache, m->name, paths, count, inputs);
  /* The module is final: its key is the entry's, whether or not the entry gets written. */
  snprintf(m->cache_key, sizeof(m->cache_key), "%s", entry.hex);
  built(hook, m);
  /* The source dump: every source and user header at the path the line table names. */
  if (!(dump = calloc(count + rec.count + 1, sizeof(*dump)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < count; i++)
    dump[n++] = (gpujit__cache_file){paths[i], sources[i].data, sources[i].size};
  arr = cJSON_AddArrayToObject(inputs, "headers");
  for (size_t i = 0; i < rec.count; i++) {
    bool source = false;
    for (size_t k = 0; k < count && !source; k++)
      source = strcmp(paths[k], rec.files[i].path) == 0;
    if (rec.files[i].toolkit || source)
      continue;
    cJSON_AddItemToArray(arr, cJSON_CreateString(rec.files[i].path));
    if ((err = dump_path(&dumped, rec.files[i].path, paths, count)) < 0)
      goto done;
    if (err == 1) {
      err = 0;
      continue; /* a source's, or another name's of the same file: dumped once */
    }
    dump[n++] = (gpujit__cache_file){dumped.items[dumped.count - 1],
                                     rec.files[i].data.data ? rec.files[i].data.data : "", rec.files[i].data.len};
  }
  cJSON_AddNumberToObject(inputs, "toolkit_headers", (double)rec.shared.count);
  if ((err = gpujit__entry_store(opts->cache, &entry, m, inputs, dump, n)) == 0 &&
      (err = gpujit__manifest_add(opts->cache, miss->request.hex, miss->head, entry.hex, &rec.deps,
                                  &rec.shared)) == 0) {
    gpujit__stage stage;
    gpujit__stage_begin(&stage, opts->trace, "remote store");
    gpujit__cache_remote_store(opts->cache, miss->request.hex, entry.hex);
    gpujit__stage_end(&stage);
    gpujit__cache_enforce_limit(opts->cache); /* the whole store counted: entry, records */
  }
done:
  built(hook, m);
  free(dump);
  gpujit__strvec_free(&dumped);
  cJSON_Delete(inputs);
  gpujit__observed_deps_free(&rec);
  return err;
}

void gpujit__miss_free(gpujit__miss *miss)
{
  gpujit__includes_free(miss->deps.inc);
  miss->deps.inc = NULL;
  gpujit__observed_free(&miss->deps.observed);
}
