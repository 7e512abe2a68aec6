/* Cache administration: counters, listing, lookup by key prefix, clear, prune, verify, sources. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/store/files.h"
#include "cache/upkeep/limit.h"
#include "cache/store/store.h"

int gpujit_cache_stats_get(gpujit_cache *c, gpujit_cache_stats *out)
{
  gpujit__stats_file s;
  gpujit__entry_list list = {0};
  int err;
  if (!c || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_stats_get: NULL argument");
  memset(out, 0, sizeof(*out));
  if ((err = gpujit__entries(&list, c->dir, false)) < 0)
    return err;
  out->entries = list.count;
  out->bytes = gpujit__dir_bytes(c->dir); /* what the limit counts: the disk, records included */
  gpujit__entry_list_free(&list);
  gpujit__cache_stats_read(c, &s);
  out->hits = s.hits;
  out->misses = s.misses;
  out->uncacheable = s.uncacheable;
  out->stores = s.stores;
  out->corrupt = s.corrupt;
  out->compile_ms_saved = s.saved_ms;
  return 0;
}

int gpujit_cache_list(gpujit_cache *c, gpujit_cache_entry_cb cb, void *payload)
{
  gpujit__entry_list list = {0};
  int err;
  if (!c || !cb)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_list: NULL argument");
  if ((err = gpujit__entries(&list, c->dir, true)) < 0)
    return err;
  for (size_t i = 0; i < list.count; i++)
    if (cb(&list.items[i].pub, payload) != 0)
      break;
  gpujit__entry_list_free(&list);
  return 0;
}

int gpujit_cache_entry_dir(char **out, gpujit_cache *c, const char *key)
{
  gpujit__entry_list list = {0};
  size_t n = key ? strlen(key) : 0, found = 0, at = 0;
  char p[PATH_MAX];
  int err;
  if (!out || !c)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_entry_dir: NULL argument");
  *out = NULL;
  if (n < 4 || n > 32 || strspn(key, "0123456789abcdef") != n)
    return gpujit__error(GPUJIT_EINVAL, "'%s' is not a cache key (4 to 32 lowercase hex digits)", key ? key : "");
  if ((err = gpujit__entries(&list, c->dir, false)) < 0)
    return err;
  for (size_t i = 0; i < list.count; i++)
    if (strncmp(list.items[i].hex, key, n) == 0) {
      found++;
      at = i;
    }
  if (found == 1) {
    gpujit__cache_entry_path(p, sizeof(p), c, list.items[at].hex);
    *out = gpujit__strdup(p);
  }
  gpujit__entry_list_free(&list);
  if (found == 0)
    return gpujit__error(GPUJIT_ENOENT, "no cache entry %s in %s", key, c->dir);
  if (found > 1)
    return gpujit__error(GPUJIT_EINVAL, "key prefix %s is ambiguous (%zu entries)", key, found);
  return *out ? 0 : gpujit__error(GPUJIT_ENOMEM, "out of memory");
}

int gpujit_cache_show(char **out_json, gpujit_cache *c, const char *key)
{
  char *dir = NULL, p[PATH_MAX];
  gpujit__buf b = {0};
  int err;
  if (!out_json)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_show: NULL out");
  *out_json = NULL;
  if ((err = gpujit_cache_entry_dir(&dir, c, key)) < 0)
    return err;
  snprintf(p, sizeof(p), "%s/meta.json", dir);
  free(dir);
  if ((err = gpujit__file_read(&b, p)) < 0)
    return err;
  *out_json = b.data;
  return 0;
}

int gpujit_cache_clear(gpujit_cache *c, uint64_t *removed)
{
  gpujit__entry_list list = {0};
  char p[PATH_MAX];
  uint64_t n = 0;
  int err;
  if (removed)
    *removed = 0;
  if (!c)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_clear: NULL cache");
  if ((err = gpujit__entries(&list, c->dir, false)) < 0)
    return err;
  for (size_t i = 0; i < list.count; i++) {
    gpujit__cache_entry_path(p, sizeof(p), c, list.items[i].hex);
    if (gpujit__remove_entry(c->dir, p) == 0)
      n++;
  }
  gpujit__entry_list_free(&list);
  /* The records that lead to entries go with them (a manifest naming no entry would only cost
   * its dependency check on every lookup); notes and settings stay. */
  for (size_t i = 0; i < 2; i++) {
    snprintf(p, sizeof(p), "%s/%s", c->dir, i ? "deps" : "manifests");
    if ((err = gpujit__rmrf(p)) < 0)
      return err;
    mkdir(p, 0700); /* the layout stays as a new cache has it */
  }
  if ((err = gpujit_cache_zero_stats(c)) < 0)
    return err;
  if (removed)
    *removed = n;
  return 0;
}

int gpujit_cache_zero_stats(gpujit_cache *c)
{
  char p[PATH_MAX];
  if (!c)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_zero_stats: NULL cache");
  for (size_t i = 0; i < 2; i++) {
    snprintf(p, sizeof(p), "%s/%s", c->dir, i ? "remote_stats" : "stats");
    if (unlink(p) < 0 && errno != ENOENT)
      return gpujit__error(GPUJIT_EIO, "%s: %s", p, strerror(errno));
  }
  return 0;
}

int gpujit_cache_prune(gpujit_cache *c, uint64_t max_bytes, double older_than_s, uint64_t *removed,
                       uint64_t *freed)
{
  if (!c)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_prune: NULL cache");
  return gpujit__cache_evict(c, max_bytes, older_than_s, removed, freed, NULL);
}

int gpujit_cache_verify(gpujit_cache *c, int remove_bad, gpujit_cache_bad_cb cb, void *payload,
                        uint64_t *out_checked, uint64_t *out_bad)
{
  gpujit__entry_list list = {0};
  uint64_t checked = 0, bad = 0;
  char p[PATH_MAX], why[512];
  int err;
  if (!c)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_verify: NULL cache");
  if ((err = gpujit__entries(&list, c->dir, false)) < 0)
    return err;
  for (size_t i = 0; i < list.count; i++) {
    gpujit__cache_entry_path(p, sizeof(p), c, list.items[i].hex);
    checked++;
    if (gpujit__verify_entry(p, why, sizeof(why)) == 0)
      continue;
    bad++;
    if (cb)
      cb(list.items[i].hex, why, payload);
    if (remove_bad)
      gpujit__remove_entry(c->dir, p);
  }
  gpujit__entry_list_free(&list);
  if (bad)
    gpujit__cache_stats_update(c, 0, 0, 0, bad, 0);
  if (out_checked)
    *out_checked = checked;
  if (out_bad)
    *out_bad = bad;
  return 0;
}

int gpujit_cache_sources(gpujit_cache *c, const char *key, gpujit_cache_source_cb cb, void *payload)
{
  char *dir = NULL, p[PATH_MAX];
  gpujit__buf b = {0};
  cJSON *j, *f;
  int err;
  if (!cb)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_sources: NULL callback");
  if ((err = gpujit_cache_entry_dir(&dir, c, key)) < 0)
    return err;
  snprintf(p, sizeof(p), "%s/meta.json", dir);
  if ((err = gpujit__file_read(&b, p)) < 0) {
    free(dir);
    return err;
  }
  j = cJSON_ParseWithLength(b.data, b.len);
  if (!cJSON_IsObject(j)) {
    err = gpujit__error(GPUJIT_ECORRUPT, "%s: unparsable metadata", p);
  } else {
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(j, "files")) {
      if (strncmp(f->string, "src", 3) != 0 || !f->string[3])
        continue; /* "src" + the path; an earlier build's relative one ("srcinc/h.h") is named as it was */
      snprintf(p, sizeof(p), "%s/%s", dir, f->string);
      if (cb(f->string + 3, p, payload) != 0)
        break;
    }
  }
  cJSON_Delete(j);
  gpujit__buf_free(&b);
  free(dir);
  return err;
}
