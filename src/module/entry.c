/* A module as a cache entry and back: its metadata, image and source dump; on a hit, its
 * line-table paths moved to this checkout. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "cache/store/store.h"
#include "compile/image/image.h"
#include "compile/nvrtc/link.h"
#include "compile/nvrtc/nvrtc.h"
#include "compile/toolkit/toolkit.h"
#include "compile/image/relocate.h"
#include "module/entry.h"
#include "module/lean.h"
#include "module/module.h"
#include "trace/compile_profile.h"

/* Rows a stored profile keeps per table (headers, templates, …): the largest. */
#define PROFILE_ROWS 50

/* The descriptive metadata; the store adds its own fields (schema, key, created, base_dir). */
static cJSON *module_meta(const gpujit_module *m, const cJSON *inputs)
{
  cJSON *j = cJSON_CreateObject(), *arr, *t;
  int a = 0, b = 0, c = 0, d = 0;
  char ver[32];
  static const char *const phases[] = {"front_end", "optimizer", "codegen", "ptxas"};
  if (!j)
    return NULL;
  cJSON_AddStringToObject(j, "module", m->name);
  cJSON_AddStringToObject(j, "arch", m->arch);
  cJSON_AddStringToObject(j, "kind", gpujit_output_kind_name(m->output));
  cJSON_AddStringToObject(j, "gpujit", GPUJIT_VERSION_STRING);
  /* NVRTC is loaded (it just compiled); nvJitLink only if a link loaded it: a store does not
   * load a 40 MB library to write its version down. */
  if (gpujit__nvrtc_version(&a, &b) == 0) {
    snprintf(ver, sizeof(ver), "%d.%d", a, b);
    cJSON_AddStringToObject(j, "nvrtc", ver);
  }
  if (gpujit__nvjitlink_loaded() && gpujit__nvjitlink_version(&c, &d) == 0) {
    snprintf(ver, sizeof(ver), "%d.%d", c, d);
    cJSON_AddStringToObject(j, "nvjitlink", ver);
  }
  gpujit_error_clear();
  cJSON_AddItemToObject(j, "inputs", inputs ? cJSON_Duplicate(inputs, 1) : cJSON_CreateObject());
  arr = cJSON_AddArrayToObject(j, "sources");
  for (size_t i = 0; i < m->sources.count; i++)
    cJSON_AddItemToArray(arr, cJSON_CreateString(m->sources.items[i]));
  arr = cJSON_AddArrayToObject(j, "kernels");
  for (size_t i = 0; i < m->kernels.count; i++) {
    cJSON *k = cJSON_CreateObject();
    gpujit__kernel_resources r;
    cJSON_AddStringToObject(k, "name", m->kernels.items[i]);
    if (gpujit__ptxas_resources(&r, m->log, m->kernels.items[i]) == 0) {
      cJSON_AddNumberToObject(k, "registers", r.registers);
      cJSON_AddNumberToObject(k, "shared_bytes", r.shared_bytes);
      cJSON_AddNumberToObject(k, "local_bytes", r.stack_bytes);
      cJSON_AddNumberToObject(k, "spill_stores", r.spill_stores);
      cJSON_AddNumberToObject(k, "spill_loads", r.spill_loads);
    }
    cJSON_AddItemToArray(arr, k);
  }
  arr = cJSON_AddArrayToObject(j, "lowered_names");
  for (size_t i = 0; i < m->name_exprs.count && i < m->lowered.count; i++) {
    cJSON *n = cJSON_CreateObject();
    cJSON_AddStringToObject(n, "expression", m->name_exprs.items[i]);
    cJSON_AddStringToObject(n, "lowered", m->lowered.items[i]);
    cJSON_AddItemToArray(arr, n);
  }
  cJSON_AddNumberToObject(j, "size", (double)m->image.len);
  t = cJSON_AddObjectToObject(j, "time_ms");
  cJSON_AddNumberToObject(t, "compile", m->timings.compile_ms);
  cJSON_AddNumberToObject(t, "link", m->timings.link_ms);
  for (int i = 0; i < 4; i++) /* NVRTC's phases, known when the compile was traced */
    if (m->phase_ms[i] > 0)
      cJSON_AddNumberToObject(t, phases[i], m->phase_ms[i]);
  cJSON_AddStringToObject(j, "log", m->log ? m->log : "");
  if ((t = gpujit__lean_json(m)))
    cJSON_AddItemToObject(j, "lean", t);
  return j;
}

static int push_strings(gpujit__strvec *v, const cJSON *arr, const char *key)
{
  const cJSON *e;
  int err;
  cJSON_ArrayForEach(e, arr) {
    const cJSON *s = key ? cJSON_GetObjectItemCaseSensitive(e, key) : e;
    if (!cJSON_IsString(s))
      return GPUJIT_ECORRUPT;
    if ((err = gpujit__strvec_push(v, s->valuestring)) < 0)
      return err;
  }
  return 0;
}

static int module_from_meta(gpujit_module *m, const cJSON *j, gpujit__buf *image)
{
  const cJSON *arch = cJSON_GetObjectItemCaseSensitive(j, "arch");
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "time_ms");
  const cJSON *log = cJSON_GetObjectItemCaseSensitive(j, "log");
  const cJSON *lowered = cJSON_GetObjectItemCaseSensitive(j, "lowered_names"), *e;
  int err;
  if (!cJSON_IsString(arch) || !cJSON_IsString(kind) || strlen(arch->valuestring) >= sizeof(m->arch))
    return GPUJIT_ECORRUPT;
  if (strcmp(kind->valuestring, gpujit_output_kind_name(m->output)) != 0)
    return GPUJIT_ECORRUPT;
  snprintf(m->arch, sizeof(m->arch), "%s", arch->valuestring);
  if ((err = push_strings(&m->kernels, cJSON_GetObjectItemCaseSensitive(j, "kernels"), "name")) < 0)
    return err;
  /* Lowered names in the order of this build's name expressions. */
  for (size_t i = 0; i < m->name_exprs.count; i++) {
    const char *found = NULL;
    cJSON_ArrayForEach(e, lowered) {
      const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, "expression");
      const cJSON *l = cJSON_GetObjectItemCaseSensitive(e, "lowered");
      if (cJSON_IsString(x) && cJSON_IsString(l) && strcmp(x->valuestring, m->name_exprs.items[i]) == 0)
        found = l->valuestring;
    }
    if (!found)
      return GPUJIT_ECORRUPT;
    if ((err = gpujit__strvec_push(&m->lowered, found)) < 0)
      return err;
  }
  if (cJSON_IsObject(t)) {
    static const char *const phases[] = {"front_end", "optimizer", "codegen", "ptxas"};
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(t, "compile");
    for (int i = 0; i < 4; i++) {
      const cJSON *p = cJSON_GetObjectItemCaseSensitive(t, phases[i]);
      m->phase_ms[i] = cJSON_IsNumber(p) ? p->valuedouble : 0;
    }
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(t, "link");
    m->timings.saved_ms = (cJSON_IsNumber(c) ? c->valuedouble : 0) + (cJSON_IsNumber(l) ? l->valuedouble : 0);
  }
  if (!(m->log = gpujit__strdup(cJSON_IsString(log) ? log->valuestring : "")))
    return GPUJIT_ENOMEM;
  gpujit__lean_from_json(m, cJSON_GetObjectItemCaseSensitive(j, "lean"));
  m->image = *image;
  return 0;
}

/*
 * Keys hold paths relative to the base directory, but line info embeds absolute ones: an
 * entry built in another checkout names that checkout's files. On a hit the entry's base
 * directory is rewritten to this one (gpujit__image_rebase); when that cannot be done the
 * lookup is a miss and the rebuild republishes the entry for this checkout.
 */
static int relocate(gpujit_module *m, const cJSON *meta, const char *base)
{
  const cJSON *old = cJSON_GetObjectItemCaseSensitive(meta, "base_dir");
  if (!cJSON_IsString(old) || !base || strcmp(old->valuestring, base) == 0)
    return 0;
  if (gpujit__image_rebase(&m->image, m->output, old->valuestring, base) < 0) {
    gpujit__log(GPUJIT_LOG_INFO, "cache entry built under %s cannot be relocated to %s; rebuilding",
                old->valuestring, base);
    return GPUJIT_ENOENT;
  }
  gpujit__log(GPUJIT_LOG_DEBUG, "cache entry relocated from %s to %s", old->valuestring, base);
  return 0;
}

int gpujit__entry_lookup(gpujit_cache *cache, const gpujit__key *key, gpujit_module *m, gpujit__cache_extra *extra)
{
  gpujit__buf image = {0};
  cJSON *meta = NULL;
  int err;

  if ((err = gpujit__cache_get(cache, key->hex, &meta, &image, extra)) < 0)
    return err;
  if (module_from_meta(m, meta, &image) < 0) {
    gpujit__cache_damaged(cache, key->hex, "metadata does not describe a module");
    err = GPUJIT_ENOENT;
    goto done;
  }
  memset(&image, 0, sizeof(image)); /* the module owns it now */
  if ((err = relocate(m, meta, gpujit__cache_base(cache))) < 0)
    goto done; /* a miss, not damage: rebuilt for this checkout */
  gpujit__cache_count_hit(cache, m->timings.saved_ms);
done:
  cJSON_Delete(meta);
  gpujit__buf_free(&image);
  return err;
}

/* A traced compile's profile in its stored form: what, when, on which toolkit, and its tables. */
static char *profile_text(const gpujit__key *key, const gpujit_module *m)
{
  gpujit__profile *p = m->profile;
  const gpujit_module_timings *t = &m->timings;
  char when[32], toolkit[64];
  int a = 0, b = 0;
  time_t now = time(NULL);
  struct tm tm;
  cJSON *j;
  char *text;

  free(p->module);
  free(p->recorded_at);
  free(p->toolkit);
  free(p->key);
  strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
  if (gpujit__nvrtc_version(&a, &b) == 0)
    snprintf(toolkit, sizeof(toolkit), "NVRTC %d.%d", a, b);
  else
    snprintf(toolkit, sizeof(toolkit), "NVRTC (unknown version)");
  gpujit_error_clear();
  p->module = gpujit__strdup(m->name);
  p->recorded_at = gpujit__strdup(when);
  p->toolkit = gpujit__strdup(toolkit);
  p->key = gpujit__strdup(key->hex);
  /* The build so far: everything but the store that is writing this. */
  p->build_us = (t->read_ms + t->hash_ms + t->lookup_ms + t->compile_ms + t->link_ms) * 1e3;
  if (!p->module || !p->recorded_at || !p->toolkit || !p->key || !(j = gpujit__profile_to_cjson(p, PROFILE_ROWS)))
    return NULL;
  text = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return text;
}

int gpujit__entry_store(gpujit_cache *cache, const gpujit__key *key, const gpujit_module *m, const cJSON *inputs,
                        const gpujit__cache_file *dump, size_t dump_count)
{
  char image_name[64], *profile = NULL;
  gpujit__cache_put put = {0};
  int err;

  if (!(put.meta = module_meta(m, inputs)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (m->profile) {
    if (!(profile = profile_text(key, m))) {
      cJSON_Delete(put.meta);
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    }
    put.extra_name = "profile.json";
    put.extra_role = "profile";
    put.extra = profile;
    put.extra_size = strlen(profile);
  }
  snprintf(image_name, sizeof(image_name), "image.%s", gpujit_output_kind_name(m->output));
  put.hex = key->hex;
  put.image_name = image_name;
  put.image = m->image.data;
  put.image_size = m->image.len;
  put.sources = dump;
  put.sources_count = dump_count;
  err = gpujit__cache_put_entry(cache, &put);
  cJSON_Delete(put.meta);
  free(profile);
  return err;
}

void gpujit__entry_replay_profile(const gpujit__cache_extra *profile, const gpujit_module *m, gpujit_trace *trace)
{
  if (!profile->data.len)
    gpujit__trace_add_unrecorded(trace, m->name,
                                 profile->why[0] ? profile->why : "the cache entry was built without --time-trace");
  else if (gpujit__trace_add_recorded(trace, m->name, profile->data.data, profile->data.len, gpujit_trace_now_us()) < 0)
    gpujit__trace_add_unrecorded(trace, m->name, gpujit_error_last());
  gpujit_error_clear();
}
