/* Manifests: what a build was asked → the entries built for it and what they depend on. */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "cache/files.h"
#include "cache/manifest.h"
#include "cache/store.h"

#define MANIFEST_MAGIC "gpujit-manifest-1"
#define GROUP_MAGIC "gpujit-deps-1"
/* A shared group verified this recently in this process is not checked again. */
#define GROUP_TTL_US 1e6

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char digest[33];
  double at_us;
} memo[64];
static unsigned memo_next;

static bool memo_fresh(const char *digest)
{
  bool fresh = false;
  double now = gpujit__now_us();
  pthread_mutex_lock(&memo_lock);
  for (size_t i = 0; i < sizeof(memo) / sizeof(memo[0]) && !fresh; i++)
    fresh = strcmp(memo[i].digest, digest) == 0 && now - memo[i].at_us < GROUP_TTL_US;
  pthread_mutex_unlock(&memo_lock);
  return fresh;
}

static void memo_put(const char *digest)
{
  pthread_mutex_lock(&memo_lock);
  snprintf(memo[memo_next].digest, sizeof(memo[0].digest), "%s", digest);
  memo[memo_next].at_us = gpujit__now_us();
  memo_next = (memo_next + 1) % (sizeof(memo) / sizeof(memo[0]));
  pthread_mutex_unlock(&memo_lock);
}

static void path_of(char *out, size_t size, const gpujit_cache *c, const char *what, const char *hex)
{
  snprintf(out, size, "%s/%s/%.2s/%s", c->dir, what, hex, hex + 2);
}

static int read_json(cJSON **out, const char *path, const char *magic, char *why, size_t n)
{
  gpujit__buf b = {0};
  size_t off = 0;
  int err = gpujit__read_blob(&b, &off, path, magic, why, n);
  *out = NULL;
  if (err == 0 && !(*out = cJSON_ParseWithLength(b.data + off, b.len - off))) {
    snprintf(why, n, "unparsable JSON");
    err = GPUJIT_ECORRUPT;
  }
  gpujit__buf_free(&b);
  return err;
}

static int write_json(const char *path, const char *magic, const cJSON *j)
{
  char *text = cJSON_PrintUnformatted(j);
  int err;
  if (!text)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  err = gpujit__write_blob(path, magic, text, strlen(text));
  free(text);
  return err;
}

/* A shared group (absolute paths), verified and remembered for this process. */
static bool group_holds(gpujit_cache *c, const char *digest)
{
  char path[PATH_MAX], why[128];
  gpujit__deps deps;
  cJSON *j = NULL;
  bool refresh = false, ok;
  int err;
  if (memo_fresh(digest))
    return true;
  path_of(path, sizeof(path), c, "deps", digest);
  if ((err = read_json(&j, path, GROUP_MAGIC, why, sizeof(why))) < 0) {
    if (err == GPUJIT_ECORRUPT)
      gpujit__cache_damaged(c, digest, why);
    return false;
  }
  if (gpujit__deps_from_json(&deps, j, NULL) < 0) {
    gpujit__cache_damaged(c, digest, "dependency group does not parse");
    cJSON_Delete(j);
    return false;
  }
  ok = gpujit__deps_verify(&deps, &refresh) == 0;
  if (ok && refresh && c->writable) {
    cJSON *n = gpujit__deps_to_json(&deps);
    if (n)
      write_json(path, GROUP_MAGIC, n);
    cJSON_Delete(n);
  }
  if (ok)
    memo_put(digest);
  gpujit__deps_free(&deps);
  cJSON_Delete(j);
  return ok;
}

int gpujit__manifest_find(gpujit_cache *c, const char *hex, char out_entry[33])
{
  char path[PATH_MAX], why[128];
  cJSON *j = NULL, *r;
  int err = GPUJIT_ENOENT;

  path_of(path, sizeof(path), c, "manifests", hex);
  if ((err = read_json(&j, path, MANIFEST_MAGIC, why, sizeof(why))) < 0) {
    if (err == GPUJIT_ECORRUPT)
      gpujit__cache_damaged(c, hex, why);
    gpujit_error_clear();
    return GPUJIT_ENOENT;
  }
  err = GPUJIT_ENOENT;
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "results")) {
    const cJSON *entry = cJSON_GetObjectItemCaseSensitive(r, "entry");
    const cJSON *shared = cJSON_GetObjectItemCaseSensitive(r, "shared");
    gpujit__deps deps;
    bool refresh = false, ok;
    if (!cJSON_IsString(entry) || strlen(entry->valuestring) != 32) {
      gpujit__cache_damaged(c, hex, "manifest record without an entry");
      break;
    }
    if (cJSON_IsString(shared) && !group_holds(c, shared->valuestring))
      continue;
    if (gpujit__deps_from_json(&deps, cJSON_GetObjectItemCaseSensitive(r, "deps"), gpujit__cache_base(c)) < 0) {
      gpujit__cache_damaged(c, hex, "manifest dependencies do not parse");
      break;
    }
    ok = gpujit__deps_verify(&deps, &refresh) == 0;
    if (ok && refresh && c->writable) {
      /* Matched by content, not by stat (a touch, a checkout): keep the new stat. */
      cJSON *n = gpujit__deps_to_json(&deps);
      if (n) {
        cJSON_ReplaceItemInObjectCaseSensitive(r, "deps", n);
        write_json(path, MANIFEST_MAGIC, j);
      }
    }
    gpujit__deps_free(&deps);
    if (ok) {
      memcpy(out_entry, entry->valuestring, 33);
      err = 0;
      break;
    }
  }
  cJSON_Delete(j);
  gpujit_error_clear();
  return err;
}

int gpujit__manifest_add(gpujit_cache *c, const char *hex, const char *entry, const gpujit__deps *deps,
                         const gpujit__deps *shared)
{
  char path[PATH_MAX], why[128];
  cJSON *old = NULL, *j, *results, *r, *e;
  int err = 0, kept = 1;

  if (!c->writable)
    return 0;
  if (!(j = cJSON_CreateObject()) || !(results = cJSON_AddArrayToObject(j, "results")) || !(r = cJSON_CreateObject())) {
    cJSON_Delete(j);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(j, "key", hex);
  cJSON_AddItemToArray(results, r);
  cJSON_AddStringToObject(r, "entry", entry);
  cJSON_AddNumberToObject(r, "recorded", (double)time(NULL));
  if (shared && shared->count) {
    gpujit__hasher *h = gpujit__hasher_new();
    gpujit__key digest;
    cJSON *g;
    if (!h) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      goto done;
    }
    gpujit__deps_hash(shared, h, "shared");
    gpujit__hasher_digest(h, &digest);
    gpujit__hasher_free(h);
    cJSON_AddStringToObject(r, "shared", digest.hex);
    path_of(path, sizeof(path), c, "deps", digest.hex);
    if (access(path, F_OK) != 0 && (g = gpujit__deps_to_json(shared)) != NULL) {
      err = write_json(path, GROUP_MAGIC, g);
      cJSON_Delete(g);
      if (err < 0)
        goto done;
    }
  }
  cJSON_AddItemToObject(r, "deps", gpujit__deps_to_json(deps));
  /* Earlier records of other entries follow, newest first. */
  path_of(path, sizeof(path), c, "manifests", hex);
  if (read_json(&old, path, MANIFEST_MAGIC, why, sizeof(why)) == 0) {
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(old, "results")) {
      const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "entry");
      if (kept >= GPUJIT__MANIFEST_MAX)
        break;
      if (!cJSON_IsString(k) || strcmp(k->valuestring, entry) == 0)
        continue;
      cJSON_AddItemToArray(results, cJSON_Duplicate(e, 1));
      kept++;
    }
  }
  gpujit_error_clear();
  err = write_json(path, MANIFEST_MAGIC, j);
done:
  cJSON_Delete(old);
  cJSON_Delete(j);
  return err;
}

/* ---- moving records between caches (export and import) ------------------------------------ */

int gpujit__record_read(const char *path, bool manifest, cJSON **out, char *why, size_t n)
{
  return read_json(out, path, manifest ? MANIFEST_MAGIC : GROUP_MAGIC, why, n);
}

int gpujit__manifest_merge(gpujit_cache *c, const char *hex, const cJSON *foreign)
{
  char path[PATH_MAX], why[128];
  cJSON *local = NULL, *j, *results, *e;
  int kept = 0, err;
  if (!c->writable)
    return 0;
  path_of(path, sizeof(path), c, "manifests", hex);
  if (read_json(&local, path, MANIFEST_MAGIC, why, sizeof(why)) < 0)
    local = NULL;
  gpujit_error_clear();
  if (!(j = cJSON_CreateObject()) || !(results = cJSON_AddArrayToObject(j, "results"))) {
    cJSON_Delete(j);
    cJSON_Delete(local);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(j, "key", hex);
  /* The local records first (they hold here), then the foreign ones for other entries. */
  for (int pass = 0; pass < 2; pass++)
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(pass ? foreign : local, "results")) {
      const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "entry"), *x;
      bool dup = false;
      if (kept >= GPUJIT__MANIFEST_MAX || !cJSON_IsString(k) || strlen(k->valuestring) != 32)
        continue;
      cJSON_ArrayForEach(x, results)
        dup |= strcmp(cJSON_GetObjectItemCaseSensitive(x, "entry")->valuestring, k->valuestring) == 0;
      if (!dup) {
        cJSON_AddItemToArray(results, cJSON_Duplicate(e, 1));
        kept++;
      }
    }
  err = write_json(path, MANIFEST_MAGIC, j);
  cJSON_Delete(j);
  cJSON_Delete(local);
  return err;
}

int gpujit__group_import(gpujit_cache *c, const char *digest, const cJSON *group)
{
  char path[PATH_MAX];
  if (!c->writable)
    return 0;
  path_of(path, sizeof(path), c, "deps", digest);
  if (access(path, F_OK) == 0)
    return 0; /* a group's name is the hash of what it records: the one here is the same */
  return write_json(path, GROUP_MAGIC, group);
}

int gpujit__manifest_refs(gpujit_cache *c, const char *hex, gpujit__strvec *entries, gpujit__strvec *groups)
{
  char path[PATH_MAX], why[128];
  cJSON *j = NULL, *r;
  int err;
  path_of(path, sizeof(path), c, "manifests", hex);
  if ((err = read_json(&j, path, MANIFEST_MAGIC, why, sizeof(why))) < 0)
    return err;
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "results")) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(r, "entry"), *g = cJSON_GetObjectItemCaseSensitive(r, "shared");
    if (cJSON_IsString(e) && (err = gpujit__strvec_push(entries, e->valuestring)) < 0)
      break;
    if (cJSON_IsString(g) && (err = gpujit__strvec_push(groups, g->valuestring)) < 0)
      break;
  }
  cJSON_Delete(j);
  return err;
}
