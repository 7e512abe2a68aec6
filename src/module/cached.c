/* The cache's side of a build. A lookup reads no header: the request key (sources, options,
 * toolkit, arch) names a manifest, and the manifest lists the builds made for that request with
 * the dependencies each had — the user's headers and failed lookups checked by stat every time,
 * the toolkit's once per lookup (or vouched for by the build server, which watches them). On a
 * miss the include scan (and, where it cannot follow the source, NVRTC's own record of the files
 * it opened) gives the next record. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "base/error.h"
#include "cache/fleet.h"
#include "cache/limit.h"
#include "cache/manifest.h"
#include "cache/store.h"
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

  memset(miss, 0, sizeof(*miss));
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
    err = gpujit__manifest_find_why(opts->cache, miss->request.hex, entry.hex, why, sizeof(why));
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
  if (err == 0 && (err = gpujit__manifest_find(opts->cache, miss->request.hex, entry.hex)) == 0) {
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
  gpujit__stage stage;
  const char *why;
  int err;
  gpujit__stage_begin(&stage, opts->trace, "scan includes");
  miss->read_start = gpujit__deps_clock();
  err = gpujit__includes_scan(&miss->deps.inc, sources, (const char *const *)m->sources.items, count, opts);
  miss->deps.complete = err == 0;
  if (err == 0) {
    gpujit__stage_arg_num(&stage, "headers", (double)gpujit__includes_count(miss->deps.inc));
    if (gpujit__includes_needs_trace(miss->deps.inc, &why))
      gpujit__stage_arg_str(&stage, "traced because", why);
  }
  m->timings.hash_ms += gpujit__stage_end(&stage);
  if (err == 0 && gpujit__includes_refused(miss->deps.inc)) /* NVRTC would hang on it */
    return gpujit__error(GPUJIT_EIO, "%s", gpujit__includes_refused(miss->deps.inc));
  if (err < 0) { /* an unreadable header: the compile will say so better; nothing is cached */
    gpujit__log(GPUJIT_LOG_DEBUG, "include scan failed (%s): not caching this build", gpujit_error_last());
    gpujit_error_clear();
  }
  return 0;
}

static void built(gpujit__built_hook *hook, gpujit_module *m)
{
  if (hook && hook->fn && !hook->called) {
    hook->called = true;
    hook->fn(m, hook->payload);
  }
}

int gpujit__cached_store(gpujit__miss *miss, gpujit_module *m, const gpujit_source *sources, size_t count,
                         const gpujit_module_options *opts, gpujit__built_hook *hook)
{
  const char *base = gpujit__cache_base(opts->cache), *why = "the include scan failed";
  char reason[600];
  gpujit__deps deps = {0}, shared = {0};
  gpujit__cache_file *dump = NULL;
  gpujit__key entry;
  cJSON *inputs = NULL, *arr;
  bool provable = miss->deps.complete;
  size_t n = 0;
  int err = 0;

  if (provable && (err = gpujit__includes_finish(miss->deps.inc, &provable, &why)) < 0)
    goto done;
  if (!miss->deps.complete && miss->deps.inc)
    gpujit__includes_needs_trace(miss->deps.inc, &why);
  if (provable && !gpujit__module_cacheable(opts, sources, (const char *const *)m->sources.items, count,
                                                   miss->deps.inc, reason, sizeof(reason))) {
    provable = false;
    why = reason;
  }
  if (!provable) {
    gpujit__log(GPUJIT_LOG_INFO, "%s: not cached: what it reads cannot be proven later (%s)", m->name, why);
    goto done;
  }
  if ((err = gpujit__module_deps(&deps, &shared, miss->deps.inc, base, miss->read_start)) < 0 ||
      (err = gpujit__module_entry_key(&entry, &miss->request, &deps, &shared)) < 0)
    goto done;
  if (!(inputs = cJSON_CreateObject()) ||
      (err = gpujit__module_key(&miss->request, inputs, base, sources, (const char *const *)m->sources.items, count,
                                opts, m->arch, m->output)) < 0) {
    err = err ? err : gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  gpujit__explain_put(opts->cache, m->name, (const char *const *)m->sources.items, count, inputs);
  /* The module is final: its key is the entry's, whether or not the entry gets written. */
  snprintf(m->cache_key, sizeof(m->cache_key), "%s", entry.hex);
  built(hook, m);
  /* The source dump: every source and user header at the path the line table names. */
  if (!(dump = calloc(count + gpujit__includes_count(miss->deps.inc) + 1, sizeof(*dump)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < count; i++)
    dump[n++] = (gpujit__cache_file){m->sources.items[i], sources[i].data, sources[i].size};
  arr = cJSON_AddArrayToObject(inputs, "headers");
  for (size_t i = 0; i < gpujit__includes_count(miss->deps.inc); i++) {
    const char *data, *path = gpujit__includes_path(miss->deps.inc, i, &data, &dump[n].size);
    if (gpujit__in_toolkit(path))
      continue;
    dump[n].path = path;
    dump[n++].data = data;
    cJSON_AddItemToArray(arr, cJSON_CreateString(path));
  }
  cJSON_AddNumberToObject(inputs, "toolkit_headers", (double)shared.count);
  if ((err = gpujit__entry_store(opts->cache, &entry, m, inputs, dump, n)) == 0 &&
      (err = gpujit__manifest_add(opts->cache, miss->request.hex, entry.hex, &deps, &shared)) == 0) {
    gpujit__stage stage;
    gpujit__stage_begin(&stage, opts->trace, "remote store");
    gpujit__cache_remote_store(opts->cache, miss->request.hex, entry.hex);
    gpujit__stage_end(&stage);
    gpujit__cache_enforce_limit(opts->cache); /* the whole store counted: entry, records */
  }
done:
  built(hook, m);
  free(dump);
  cJSON_Delete(inputs);
  gpujit__deps_free(&deps);
  gpujit__deps_free(&shared);
  return err;
}

void gpujit__miss_free(gpujit__miss *miss)
{
  gpujit__includes_free(miss->deps.inc);
  miss->deps.inc = NULL;
}
