/* Manifests: what a build was asked (its request key) → the entries built for it, newest first,
 * each with the dependencies that must still hold for it to be served and the shared group it
 * used (cache/records/groups.c). A lookup serves the first record whose dependencies hold. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/records/groups.h"
#include "cache/records/manifests.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/store/store.h"
#include "cache/store/total.h"

#define MANIFEST_MAGIC "gpujit-manifest-1"

static int read_manifest(cJSON **out, const char *path, char *why, size_t n)
{
  gpujit__buf b = {0};
  int err = gpujit__file_read(&b, path);
  *out = NULL;
  if (err < 0) {
    gpujit_error_clear();
    snprintf(why, n, "unreadable");
    err = err == GPUJIT_ENOENT ? GPUJIT_ENOENT : GPUJIT_ECORRUPT;
  } else
    err = gpujit__manifest_parse(b.data, b.len, out, why, n);
  gpujit__buf_free(&b);
  return err;
}

static int write_manifest(gpujit_cache *c, const char *path, const cJSON *j)
{
  char *text = cJSON_PrintUnformatted(j);
  int err;
  if (!text)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  err = gpujit__cache_write_record(c, path, MANIFEST_MAGIC, text, strlen(text));
  free(text);
  return err;
}

int gpujit__manifest_find(gpujit_cache *c, const char *hex, char out_entry[33])
{
  return gpujit__manifest_find_why(c, hex, NULL, out_entry, NULL, 0);
}

int gpujit__manifest_find_why(gpujit_cache *c, const char *hex, gpujit__head *head, char out_entry[33], char *miss,
                              size_t miss_size)
{
  char path[PATH_MAX], why[128], first[PATH_MAX + 128] = "";
  size_t records = 0, evicted = 0;
  cJSON *j = NULL, *r;
  int err = GPUJIT_ENOENT;
  gpujit__group_memo memo = {.n = 0};

  gpujit__cache_record_path(path, sizeof(path), c, "manifests", hex);
  if ((err = read_manifest(&j, path, why, sizeof(why))) < 0) {
    if (err == GPUJIT_ECORRUPT)
      gpujit__cache_damaged(c, hex, why);
    if (miss && miss_size)
      snprintf(miss, miss_size, err == GPUJIT_ECORRUPT ? "its cache record was damaged (%s)"
                                : GPUJIT__NEVER_BUILT "%s", err == GPUJIT_ECORRUPT ? why : "");
    gpujit_error_clear();
    return GPUJIT_ENOENT;
  }
  err = GPUJIT_ENOENT;
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "results")) {
    const cJSON *entry = cJSON_GetObjectItemCaseSensitive(r, "entry");
    const cJSON *shared = cJSON_GetObjectItemCaseSensitive(r, "shared");
    gpujit__deps deps;
    gpujit__held_group g;
    bool refresh = false, ok, moved = false;
    char entry_dir[PATH_MAX];
    if (!cJSON_IsString(entry) || strlen(entry->valuestring) != 32) {
      gpujit__cache_damaged(c, hex, "manifest record without an entry");
      break;
    }
    gpujit__cache_entry_path(entry_dir, sizeof(entry_dir), c, entry->valuestring);
    records++;
    if (access(entry_dir, F_OK) != 0) {
      evicted++;
      continue; /* evicted or cleared: not worth checking what it depends on */
    }
    if (cJSON_IsString(shared) && !gpujit__group_holds(c, shared->valuestring, head, &memo, &g, first[0] ? NULL : first, sizeof(first)))
      continue;
    if (gpujit__deps_from_json(&deps, cJSON_GetObjectItemCaseSensitive(r, "deps"), gpujit__cache_base(c)) < 0) {
      gpujit__cache_damaged(c, hex, "manifest dependencies do not parse");
      break;
    }
    ok = gpujit__deps_verify_moved(&deps, &refresh, &moved, first[0] ? NULL : first, sizeof(first)) == 0;
    if (ok && cJSON_IsString(shared) && gpujit__deps_any_once(&deps)) {
      /* identities on both sides as when last checked across: one file as they were; else checked */
      const char *kept = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "shared_ids"));
      gpujit__group_print(c, &g, &memo);
      if (moved || !g.print[0] || !kept || strcmp(kept, g.print) != 0) {
        ok = gpujit__group_identities_hold(c, shared->valuestring, &deps, first[0] ? NULL : first, sizeof(first));
        if (ok && g.print[0]) { /* written back with the manifest */
          cJSON_DeleteItemFromObjectCaseSensitive(r, "shared_ids");
          cJSON_AddStringToObject(r, "shared_ids", g.print);
          refresh = true;
        }
      }
    }
    if (ok && refresh && c->writable) {
      /* Matched by content, not by stat (a touch, a checkout): keep the new stat. */
      cJSON *n = gpujit__deps_to_json(&deps);
      if (n) {
        cJSON_ReplaceItemInObjectCaseSensitive(r, "deps", n);
        write_manifest(c, path, j);
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
  if (err != 0 && miss && miss_size) { /* the first record's reason: the build most like this one */
    if (first[0])
      snprintf(miss, miss_size, "%s%s", first, records > 1 ? " (and the other builds on record differ too)" : "");
    else if (records && evicted == records)
      snprintf(miss, miss_size, "built before, but its cache entry was evicted or cleared");
    else
      snprintf(miss, miss_size, GPUJIT__NEVER_BUILT);
  }
  gpujit_error_clear();
  return err;
}

int gpujit__manifest_add(gpujit_cache *c, const char *hex, gpujit__head *head, const char *entry,
                         const gpujit__deps *deps, const gpujit__deps *shared)
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
    if (!h) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      goto done;
    }
    gpujit__deps_hash(shared, h, "shared");
    gpujit__hasher_digest(h, &digest);
    gpujit__hasher_free(h);
    cJSON_AddStringToObject(r, "shared", digest.hex);
    if (gpujit__deps_any_once(deps)) { /* the group's identities its files were numbered against */
      char print[33];
      gpujit__deps_identity_print(shared, print);
      if (print[0])
        cJSON_AddStringToObject(r, "shared_ids", print);
    }
    if ((err = gpujit__group_store(c, digest.hex, head, shared)) < 0)
      goto done;
  }
  cJSON_AddItemToObject(r, "deps", gpujit__deps_to_json(deps));
  /* Earlier records of other entries follow, newest first. */
  gpujit__cache_record_path(path, sizeof(path), c, "manifests", hex);
  if (read_manifest(&old, path, why, sizeof(why)) == 0) {
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
  err = write_manifest(c, path, j);
done:
  cJSON_Delete(old);
  cJSON_Delete(j);
  return err;
}

/* ---- moving records between caches (export and import) ------------------------------------ */

int gpujit__manifest_read(const char *path, cJSON **out, char *why, size_t n)
{
  return read_manifest(out, path, why, n);
}

int gpujit__manifest_parse(const char *data, size_t len, cJSON **out, char *why, size_t n)
{
  size_t off = 0;
  int err = gpujit__blob_check(data, len, &off, MANIFEST_MAGIC, why, n);
  *out = NULL;
  if (err == 0 && !(*out = cJSON_ParseWithLength(data + off, len - off))) {
    snprintf(why, n, "unparsable JSON");
    err = GPUJIT_ECORRUPT;
  }
  return err;
}

int gpujit__manifest_merge(gpujit_cache *c, const char *hex, const cJSON *foreign)
{
  char path[PATH_MAX], why[128];
  cJSON *local = NULL, *j, *results, *e;
  int kept = 0, err;
  if (!c->writable)
    return 0;
  gpujit__cache_record_path(path, sizeof(path), c, "manifests", hex);
  if (read_manifest(&local, path, why, sizeof(why)) < 0)
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
  err = write_manifest(c, path, j);
  cJSON_Delete(j);
  cJSON_Delete(local);
  return err;
}

int gpujit__manifest_refs(gpujit_cache *c, const char *hex, gpujit__strvec *entries, gpujit__strvec *groups)
{
  char path[PATH_MAX], why[128];
  cJSON *j = NULL, *r;
  int err;
  gpujit__cache_record_path(path, sizeof(path), c, "manifests", hex);
  if ((err = read_manifest(&j, path, why, sizeof(why))) < 0)
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
