/* Remote bundles (cache/exchange/bundle.h):
 *   "gpujit-bundle-1\n" { u32 name length, name, u64 size, bytes }* u64 XXH3-64 of all before it
 * Unpacked into a staging directory with the checks of an archive import (cache/exchange/import.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/exchange/archive.h"
#include "cache/exchange/bundle.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/records/groups.h"
#include "cache/records/manifests.h"

#define BUNDLE_MAGIC "gpujit-bundle-1\n"

static int add_record(gpujit__buf *out, const char *root, const char *rel)
{
  char path[PATH_MAX];
  gpujit__buf b = {0};
  uint32_t n = (uint32_t)strlen(rel);
  uint64_t size;
  int err;
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  if ((err = gpujit__file_read(&b, path)) < 0)
    return err;
  size = b.len;
  if ((err = gpujit__buf_put(out, &n, sizeof(n))) == 0 && (err = gpujit__buf_put(out, rel, n)) == 0 &&
      (err = gpujit__buf_put(out, &size, sizeof(size))) == 0)
    err = gpujit__buf_put(out, b.data ? b.data : "", b.len);
  gpujit__buf_free(&b);
  return err;
}

static int add_record_cb(const char *root, const char *rel, void *out) { return add_record(out, root, rel); }

int gpujit__bundle_pack(gpujit_cache *c, const char *request_hex, const char *entry_hex, gpujit__buf *out)
{
  gpujit__strvec entries = {0}, groups = {0};
  char rel[64];
  uint64_t sum;
  int err;
  out->len = 0;
  if ((err = gpujit__buf_put(out, BUNDLE_MAGIC, strlen(BUNDLE_MAGIC))) < 0)
    return err;
  snprintf(rel, sizeof(rel), "entries/%.2s/%s", entry_hex, entry_hex + 2);
  err = gpujit__walk_files(c->dir, rel, add_record_cb, out);
  if (err == 0 && (err = gpujit__manifest_refs(c, request_hex, &entries, &groups)) == 0) {
    snprintf(rel, sizeof(rel), "manifests/%.2s/%s", request_hex, request_hex + 2);
    err = add_record(out, c->dir, rel);
    for (size_t i = 0; i < groups.count && err == 0; i++) {
      snprintf(rel, sizeof(rel), "deps/%.2s/%s", groups.items[i], groups.items[i] + 2);
      err = add_record(out, c->dir, rel);
    }
  }
  if (err == 0) {
    sum = XXH3_64bits(out->data, out->len);
    err = gpujit__buf_put(out, &sum, sizeof(sum));
  }
  gpujit__strvec_free(&entries);
  gpujit__strvec_free(&groups);
  return err;
}

/* A bundle's records, pointing into its bytes. */
typedef struct rec {
  char rel[PATH_MAX];
  const char *data;
  size_t size;
} rec;

typedef struct recs {
  rec *items;
  size_t count, cap;
} recs;

static const rec *find(const recs *r, const char *rel)
{
  for (size_t i = 0; i < r->count; i++)
    if (!strcmp(r->items[i].rel, rel))
      return &r->items[i];
  return NULL;
}

/* Every record's name and size checked as an archive member's (cache/exchange/import.c). */
static int parse(recs *r, const unsigned char *p, const unsigned char *end, const char *name, uint64_t max)
{
  while (p < end) {
    uint32_t n;
    uint64_t size;
    rec *e;
    const char *why;
    if ((size_t)(end - p) < sizeof(n) || (memcpy(&n, p, sizeof(n)), p += sizeof(n), n == 0) || n >= PATH_MAX ||
        (size_t)(end - p) < n + sizeof(size))
      return gpujit__error(GPUJIT_EPARSE, "%s: a record runs past the end", name);
    if (!(e = gpujit__grow(r->items, &r->cap, r->count, sizeof(*e), 8)))
      return GPUJIT_ENOMEM;
    r->items = e;
    e = &r->items[r->count];
    memcpy(e->rel, p, n);
    e->rel[n] = '\0';
    p += n;
    memcpy(&size, p, sizeof(size));
    p += sizeof(size);
    if (memchr(e->rel, '\0', n) || (why = gpujit__cache_member_problem(e->rel)))
      return gpujit__error(GPUJIT_EPARSE, "%s: record %s is %s: refused", name, e->rel,
                           memchr(e->rel, '\0', n) ? "malformed" : why);
    if (size > max || size > (uint64_t)(end - p))
      return gpujit__error(GPUJIT_EPARSE, "%s: record %s of %llu bytes is too large: refused", name, e->rel,
                           (unsigned long long)size);
    if (find(r, e->rel))
      return gpujit__error(GPUJIT_EPARSE, "%s: record %s appears twice: refused", name, e->rel);
    e->data = (const char *)p;
    e->size = (size_t)size;
    p += size;
    r->count++;
  }
  return 0;
}

/* An entry's records checked as a stored entry is (metadata checksum, key, every payload). */
static int check_entry(const recs *r, const char *dir, const char *hex, cJSON **meta, char *why, size_t n)
{
  char rel[PATH_MAX];
  const rec *m, *sum;
  const cJSON *key, *f;
  snprintf(rel, sizeof(rel), "%s/meta.json", dir);
  m = find(r, rel);
  snprintf(rel, sizeof(rel), "%s/meta.xxh3", dir);
  sum = find(r, rel);
  if (!m) {
    snprintf(why, n, "meta.json missing");
    return -1;
  }
  if (gpujit__meta_check(m->data, m->size, sum ? sum->data : NULL, sum ? sum->size : 0, meta, why, n) < 0)
    return -1;
  key = cJSON_GetObjectItemCaseSensitive(*meta, "key");
  if (!cJSON_IsString(key) || strcmp(key->valuestring, hex) != 0) {
    snprintf(why, n, "its metadata names another key");
    return -1;
  }
  if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(*meta, "image"))) {
    snprintf(why, n, "metadata names no image");
    return -1;
  }
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(*meta, "files")) {
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(f, "file");
    const rec *p;
    snprintf(rel, sizeof(rel), "%s/%s", dir, cJSON_IsString(file) ? file->valuestring : "");
    p = find(r, rel);
    if (!p && cJSON_IsString(file)) {
      snprintf(why, n, "%s missing", file->valuestring);
      return -1;
    }
    if (gpujit__payload_check(f, p ? p->data : "", p ? p->size : 0, false, why, n) < 0)
      return -1;
  }
  return 0;
}

/* One entry: checked, then written where the cache's entries are made (a temp directory,
 * published whole), unless a good local entry is there. */
static int unpack_entry(gpujit_cache *c, const recs *r, const char *hex, gpujit_cache_import_result *res)
{
  char dir[64], why[256], final[PATH_MAX], tmp[PATH_MAX], parent[PATH_MAX];
  cJSON *meta = NULL;
  const cJSON *f;
  const char *names[2] = {"meta.json", "meta.xxh3"};
  int err = 0;
  snprintf(dir, sizeof(dir), "entries/%.2s/%s", hex, hex + 2);
  if (check_entry(r, dir, hex, &meta, why, sizeof(why)) < 0) {
    gpujit__log(GPUJIT_LOG_WARN, "remote entry %s refused: %s", hex, why);
    cJSON_Delete(meta);
    res->rejected++;
    return 0;
  }
  gpujit__cache_entry_path(final, sizeof(final), c, hex);
  if (gpujit__is_dir(final) && gpujit__verify_entry(final, why, sizeof(why)) == 0) {
    cJSON_Delete(meta);
    res->present++; /* a good local entry stays */
    return 0;
  }
  snprintf(tmp, sizeof(tmp), "%s/tmp/entry.XXXXXX", c->dir);
  if (!mkdtemp(tmp)) {
    cJSON_Delete(meta);
    return gpujit__error(GPUJIT_EIO, "%s: %s", tmp, strerror(errno));
  }
  for (size_t i = 0; i < 2 && err == 0; i++) {
    char rel[PATH_MAX];
    const rec *p;
    snprintf(rel, sizeof(rel), "%s/%s", dir, names[i]);
    p = find(r, rel);
    err = gpujit__write_new(tmp, names[i], p->data, p->size);
  }
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(meta, "files")) {
    const char *file = cJSON_GetObjectItemCaseSensitive(f, "file")->valuestring;
    char rel[PATH_MAX];
    const rec *p;
    snprintf(rel, sizeof(rel), "%s/%s", dir, file);
    p = find(r, rel);
    if (err == 0)
      err = gpujit__write_new(tmp, file, p->data, p->size);
  }
  cJSON_Delete(meta);
  snprintf(parent, sizeof(parent), "%s/entries/%.2s", c->dir, hex);
  if (err == 0 && mkdir(parent, 0700) < 0 && errno != EEXIST)
    err = gpujit__error(GPUJIT_EIO, "%s: %s", parent, strerror(errno));
  if (err == 0 && (err = gpujit__publish_dir(c->dir, tmp, final)) == 0) {
    res->entries++;
    return 0;
  }
  gpujit__rmrf(tmp);
  return err;
}

/* The hex key of a record "<what>/<2 hex>/<30 hex>[/...]" into `hex`, when of that kind. */
static bool record_of(const rec *e, const char *what, bool whole, char hex[33])
{
  size_t w = strlen(what);
  if (strncmp(e->rel, what, w) != 0 || e->rel[w] != '/' || strlen(e->rel) < w + 34)
    return false;
  if (whole ? e->rel[w + 34] != '\0' : strcmp(e->rel + w + 34, "/meta.json") != 0)
    return false;
  snprintf(hex, 33, "%.2s%.30s", e->rel + w + 1, e->rel + w + 4);
  return true;
}

/* Whether the bundle answers `request` and nothing else: its one manifest is the request's, and
 * every entry and group in it is one that manifest names. Checked before anything is written: a
 * server that answers with another key's bundle (a bug, a collision of its own keys, a hostile
 * store) must not get that entry stored. */
static bool answers(const recs *r, const char *request, char *why, size_t n)
{
  const rec *manifest = NULL;
  char hex[33];
  for (size_t i = 0; i < r->count; i++)
    if (record_of(&r->items[i], "manifests", true, hex)) {
      if (strcmp(hex, request) != 0 || manifest) {
        snprintf(why, n, "it holds the manifest of %s, not only of %s", hex, request);
        return false;
      }
      manifest = &r->items[i];
    }
  if (!manifest) {
    snprintf(why, n, "it holds no manifest for %s", request);
    return false;
  }
  for (size_t i = 0; i < r->count; i++)
    if ((record_of(&r->items[i], "entries", false, hex) || record_of(&r->items[i], "deps", true, hex)) &&
        !memmem(manifest->data, manifest->size, hex, 32)) {
      snprintf(why, n, "it holds %s, which the manifest of %s does not name", hex, request);
      return false;
    }
  return true;
}

/* Unpacked in memory, checked as an import's staged records are (entries, then groups, then
 * manifests, which name them), and written only where they belong: a remote hit makes no
 * staging tree of its own (a new file or directory costs 0.2-0.3 ms on some disks). */
static int unpack_records(gpujit_cache *c, const recs *r, gpujit_cache_import_result *res)
{
  char hex[33], why[128];
  int err = 0;
  for (size_t i = 0; i < r->count && err == 0; i++)
    if (record_of(&r->items[i], "entries", false, hex))
      err = unpack_entry(c, r, hex, res);
  for (size_t i = 0; i < r->count && err == 0; i++) {
    gpujit__deps group;
    if (!record_of(&r->items[i], "deps", true, hex) || gpujit__group_same(c, hex, r->items[i].data, r->items[i].size))
      continue; /* the same bytes are here: checked when they were stored */
    if ((err = gpujit__group_parse(r->items[i].data, r->items[i].size, &group, why, sizeof(why))) == 0) {
      err = gpujit__group_import(c, hex, &group, why, sizeof(why));
      gpujit__deps_free(&group);
    }
    if (err == GPUJIT_ECORRUPT) {
      gpujit__log(GPUJIT_LOG_WARN, "remote dependency group %s refused: %s", hex, why);
      res->rejected++;
      err = 0;
    }
  }
  for (size_t i = 0; i < r->count && err == 0; i++) {
    cJSON *j = NULL;
    if (!record_of(&r->items[i], "manifests", true, hex))
      continue;
    if (gpujit__manifest_parse(r->items[i].data, r->items[i].size, &j, why, sizeof(why)) < 0) {
      gpujit__log(GPUJIT_LOG_WARN, "remote manifest %s refused: %s", hex, why);
      res->rejected++;
    } else if ((err = gpujit__manifest_merge(c, hex, j)) == 0)
      res->manifests++;
    cJSON_Delete(j);
  }
  return err;
}

int gpujit__bundle_unpack(gpujit_cache *c, const void *data, size_t len, const char *name, const char *request,
                          uint64_t max_member_bytes, gpujit_cache_import_result *out)
{
  char why[160];
  const unsigned char *p = data;
  size_t magic = strlen(BUNDLE_MAGIC);
  recs r = {0};
  uint64_t sum;
  int err;
  memset(out, 0, sizeof(*out));
  if (len < magic + sizeof(sum) || memcmp(p, BUNDLE_MAGIC, magic) != 0)
    return gpujit__error(GPUJIT_EPARSE, "%s: not a gpujit bundle", name);
  memcpy(&sum, p + len - sizeof(sum), sizeof(sum));
  if (XXH3_64bits(p, len - sizeof(sum)) != sum)
    return gpujit__error(GPUJIT_ECORRUPT, "%s: checksum mismatch (damaged or truncated)", name);
  err = parse(&r, p + magic, p + len - sizeof(sum), name, max_member_bytes ? max_member_bytes : (uint64_t)1 << 30);
  if (err == 0 && request && !answers(&r, request, why, sizeof(why)))
    err = gpujit__error(GPUJIT_ECORRUPT, "%s: %s", name, why);
  if (err == 0)
    err = unpack_records(c, &r, out);
  free(r.items);
  return err;
}
