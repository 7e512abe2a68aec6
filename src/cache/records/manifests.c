/* Manifests: what a build was asked → the entries built for it and what they depend on. */
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
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/records/head_start.h"
#include "base/crew.h"
#include "cache/records/manifests.h"
#include "cache/store/total.h"
#include "cache/store/store.h"

#define MANIFEST_MAGIC "gpujit-manifest-1"
#define GROUP_MAGIC "gpujit-deps-4"    /* binary, read in place (cache/deps_text.c) */
#define GROUP_MAGIC_V3 "gpujit-deps-3" /* binary without devices, still read; rewritten by a hit */
#define GROUP_MAGIC_V2 "gpujit-deps-2" /* text, likewise */
#define GROUP_MAGIC_V1 "gpujit-deps-1" /* JSON, likewise */
static _Thread_local const gpujit__voucher *voucher;

const gpujit__voucher *gpujit__manifest_voucher(const gpujit__voucher *v)
{
  const gpujit__voucher *old = voucher;
  voucher = v;
  return old;
}

static bool checks_here(void) { return !voucher || (voucher->absent && voucher->absent(voucher->ctx)); }

static void path_of(char *out, size_t size, const gpujit_cache *c, const char *what, const char *hex)
{
  snprintf(out, size, "%s/%s/%.2s/%s", c->dir, what, hex, hex + 2);
}

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

static int write_group(gpujit_cache *c, const char *path, const gpujit__deps *d)
{
  gpujit__buf b = {0};
  int err = gpujit__deps_to_bin(d, &b);
  if (err == 0)
    err = gpujit__cache_write_record(c, path, GROUP_MAGIC, b.data ? b.data : "", b.len);
  gpujit__buf_free(&b);
  return err;
}

/* A group record's bytes: which form (4 to 1) and where its body starts; the checksum holds. */
static int group_check(const char *data, size_t len, size_t *off, int *form, char *why, size_t n)
{
  static const char *const magic[] = {GROUP_MAGIC, GROUP_MAGIC_V3, GROUP_MAGIC_V2, GROUP_MAGIC_V1};
  int err = GPUJIT_ECORRUPT;
  *form = 0;
  for (int i = 0; i < 4; i++)
    if ((err = gpujit__blob_check(data, len, off, magic[i], why, n)) == 0) {
      *form = 4 - i;
      return 0;
    } else if (strncmp(why, "not a", 5) != 0)
      return err; /* this form, damaged */
  snprintf(why, n, "not a %s record", GROUP_MAGIC);
  return err;
}

/* The records of a checked body of form `form`. The binary form is read in place: from `owned`
 * (the record's buffer, then handed to `out`) when given, else from a copy. */
static int group_body(int form, const char *body, size_t len, gpujit__buf *owned, gpujit__deps *out)
{
  cJSON *j = NULL;
  int err;
  memset(out, 0, sizeof(*out));
  if (form == 2)
    return gpujit__deps_from_text(out, body, len);
  if (form == 1) {
    err = (j = cJSON_ParseWithLength(body, len)) && gpujit__deps_from_json(out, j, NULL) == 0 ? 0 : GPUJIT_ECORRUPT;
    cJSON_Delete(j);
    return err;
  }
  gpujit__buf copy = {0};
  if (!owned && (err = gpujit__buf_put(&copy, body, len)) < 0)
    return err;
  if ((err = (form == 3 ? gpujit__deps_from_bin3 : gpujit__deps_from_bin)(out, owned ? body : copy.data, len)) < 0) {
    gpujit__buf_free(&copy);
    return err;
  }
  out->keep = owned ? *owned : copy;
  if (owned)
    memset(owned, 0, sizeof(*owned));
  return 0;
}

static int group_from(const char *data, size_t len, gpujit__buf *owned, gpujit__deps *out, int *form, char *why,
                      size_t n)
{
  size_t off = 0;
  int err = group_check(data, len, &off, form, why, n);
  memset(out, 0, sizeof(*out));
  if (err == 0 && (err = group_body(*form, data + off, len - off, owned, out)) == GPUJIT_ECORRUPT)
    snprintf(why, n, "dependency group does not parse");
  return err;
}

int gpujit__group_parse(const char *data, size_t len, gpujit__deps *out, char *why, size_t n)
{
  int form;
  return group_from(data, len, NULL, out, &form, why, n);
}

/* Groups this large are mapped, not read: the records are checked where they lie (cache files
 * are replaced by rename, never rewritten in place). */
#define GROUP_MAP_MIN (16 * 1024)

/* A group file's bytes, mapped or read. @return 0, GPUJIT_ENOENT or GPUJIT_ECORRUPT (`why`). */
static int group_file(gpujit__buf *b, const char *path, char *why, size_t n)
{
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = 0;
  memset(b, 0, sizeof(*b));
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= GROUP_MAP_MIN &&
      st.st_size <= 64 * 1024 * 1024 && gpujit__buf_map(b, fd, (size_t)st.st_size) == 0) {
    close(fd);
    return 0;
  }
  if (fd >= 0)
    close(fd);
  gpujit_error_clear();
  if ((err = gpujit__file_read(b, path)) < 0) { /* small, or not a file: read (and refused) as any */
    gpujit_error_clear();
    snprintf(why, n, "unreadable");
    err = err == GPUJIT_ENOENT ? GPUJIT_ENOENT : GPUJIT_ECORRUPT;
  }
  return err;
}

static int group_read_form(const char *path, gpujit__deps *out, int *form, char *why, size_t n)
{
  gpujit__buf b;
  int err = group_file(&b, path, why, n);
  memset(out, 0, sizeof(*out));
  *form = 0;
  if (err == 0)
    err = group_from(b.data, b.len, &b, out, form, why, n);
  gpujit__buf_free(&b);
  return err;
}

int gpujit__group_read(const char *path, gpujit__deps *out, char *why, size_t n)
{
  int form;
  return group_read_form(path, out, &form, why, n);
}

int gpujit__group_load(gpujit_cache *c, const char *digest, gpujit__deps *out, char *why, size_t n)
{
  char path[PATH_MAX];
  memset(out, 0, sizeof(*out));
  if (strlen(digest) != 32 || strspn(digest, "0123456789abcdef") != 32) {
    snprintf(why, n, "'%.40s' does not name a dependency group", digest);
    return GPUJIT_ENOENT;
  }
  path_of(path, sizeof(path), c, "deps", digest);
  return gpujit__group_read(path, out, why, n);
}

/* Whether a group file is there and sound (a damaged one is written again by the next store). */
static bool group_readable(const char *path)
{
  gpujit__deps d;
  char why[128];
  bool ok = gpujit__group_read(path, &d, why, sizeof(why)) == 0;
  gpujit__deps_free(&d); /* empty when not read */
  gpujit_error_clear();
  return ok;
}

/* A shared group (absolute paths) holds: vouched for by a watcher or verified here, once per
 * lookup (the records of one manifest mostly share it). Never remembered past the lookup: a
 * process that lives on (a server's worker, a Python session) would hit on a changed toolkit. */
typedef struct held_group {
  char digest[33];
  char print[33]; /* its identity print (gpujit__deps_identity_print) now; "" not yet worked out */
} held_group;

typedef struct group_memo {
  held_group held[8];
  size_t n;
} group_memo;

/* A group's records read whole and checked the full way: by content where a stat moved, new
 * stats written back, a group of an earlier form written again in this one (the same records:
 * the same name) so that the next lookup checks it in place. */
static bool group_holds_whole(gpujit_cache *c, const char *path, const char *digest, char print[33], char *miss,
                              size_t miss_size)
{
  char why[128];
  gpujit__deps deps;
  bool refresh = false, ok = false, moved;
  int form, err = group_read_form(path, &deps, &form, why, sizeof(why));
  if (err == GPUJIT_ECORRUPT)
    gpujit__cache_damaged(c, digest, why);
  if (err < 0)
    return false;
  ok = gpujit__deps_verify_moved(&deps, &refresh, &moved, miss, miss_size) == 0;
  if (ok) /* the identities as found, before a refresh records them */
    gpujit__deps_identity_print(&deps, print);
  if (ok && (refresh || form != 4) && c->writable)
    write_group(c, path, &deps);
  gpujit__deps_free(&deps);
  return ok;
}

int gpujit__group_view(gpujit_cache *c, const char *digest, gpujit__buf *b, gpujit__deps_view *view)
{
  char path[PATH_MAX], why[128];
  size_t off;
  int form;
  path_of(path, sizeof(path), c, "deps", digest);
  if (group_file(b, path, why, sizeof(why)) == 0 && group_check(b->data, b->len, &off, &form, why, sizeof(why)) == 0 &&
      form == 4 && gpujit__deps_view_open(view, b->data + off, b->len - off) == 0)
    return 0;
  gpujit_error_clear();
  return GPUJIT_ENOENT;
}

gpujit__head *gpujit__manifest_head_start(gpujit_cache *c, const char *hint)
{
  gpujit__head *h = checks_here() ? gpujit__head_open(c, hint) : NULL;
  gpujit__buf b = {0};
  gpujit__deps_view view;
  int how;
  if (h && gpujit__head_noted(h) && gpujit__helpers_threads(&how) > 1 &&
      gpujit__group_view(c, gpujit__head_noted(h), &b, &view) == 0)
    gpujit__head_begun(h, gpujit__deps_check_ahead(&view, &b));
  gpujit__buf_free(&b);
  return h;
}

/* `out->print`: the group's identity print where the check had its records; else "" (group_print). */
static bool group_holds(gpujit_cache *c, const char *digest, group_memo *memo, held_group *out, char *miss,
                        size_t miss_size)
{
  char path[PATH_MAX];
  gpujit__buf b = {0};
  gpujit__deps_view view;
  gpujit__deps_ahead *ahead;
  int exact = GPUJIT_ENOENT;
  bool ok;
  memset(out, 0, sizeof(*out));
  snprintf(out->digest, sizeof(out->digest), "%s", digest);
  for (size_t i = 0; i < memo->n; i++)
    if (!strcmp(memo->held[i].digest, digest)) {
      *out = memo->held[i];
      return true;
    }
  /* a voucher vouches only for a group whose identities are as recorded (server/watch.c) */
  if (!(ok = voucher && voucher->held(voucher->ctx, digest))) {
    /* nearly every lookup: every record exactly as recorded, checked where it lies (the bytes go
     * with the check) — begun ahead of the lookup where this thread's build named this group
     * (cache/head.c); else — an earlier form, a stat moved, a header changed, damage — whole */
    if ((ahead = gpujit__head_take(c, digest)) != NULL) {
      gpujit__deps_ahead_print(ahead, out->print); /* while the helpers check */
      exact = gpujit__deps_ahead_join(ahead);
    } else if (gpujit__group_view(c, digest, &b, &view) == 0) {
      gpujit__deps_view_identity_print(&view, out->print);
      exact = gpujit__deps_verify_view(&view, &b);
    }
    gpujit__buf_free(&b);
    path_of(path, sizeof(path), c, "deps", digest);
    ok = exact == GPUJIT_ENOENT ? group_holds_whole(c, path, digest, out->print, miss, miss_size) : exact == 0;
    if (ok)
      gpujit__head_held(c, digest);
  }
  if (ok && memo->n < sizeof(memo->held) / sizeof(memo->held[0]))
    memo->held[memo->n++] = *out;
  return ok;
}

/* The print of a group that holds exactly as recorded, from its records ("" where they cannot be read). */
static void group_print(gpujit_cache *c, held_group *g, group_memo *memo)
{
  gpujit__buf b = {0};
  gpujit__deps_view view;
  if (!g->print[0] && gpujit__group_view(c, g->digest, &b, &view) == 0)
    gpujit__deps_view_identity_print(&view, g->print);
  gpujit__buf_free(&b);
  for (size_t i = 0; i < memo->n; i++)
    if (!strcmp(memo->held[i].digest, g->digest))
      memcpy(memo->held[i].print, g->print, sizeof(g->print));
}

/* The `once` files one file now are those recorded as one, across an entry and its group (a user
 * header once a hard link of a toolkit header and now a copy, or the reverse: included twice). */
static bool identities_hold_across(gpujit_cache *c, const char *digest, gpujit__deps *deps, char *miss, size_t n)
{
  gpujit__deps group;
  char why[128];
  bool ok = gpujit__group_load(c, digest, &group, why, sizeof(why)) == 0 &&
            gpujit__deps_stat_identities(&group) == 0 && gpujit__deps_identities_hold(deps, &group) == 0;
  gpujit_error_clear();
  if (!ok && miss && n)
    snprintf(miss, n, "a header that was one file with a toolkit header (a link) is not now, or the other way "
                      "round (#pragma once sees identity)");
  gpujit__deps_free(&group);
  return ok;
}

int gpujit__manifest_find(gpujit_cache *c, const char *hex, char out_entry[33])
{
  return gpujit__manifest_find_why(c, hex, out_entry, NULL, 0);
}

int gpujit__manifest_find_why(gpujit_cache *c, const char *hex, char out_entry[33], char *miss, size_t miss_size)
{
  char path[PATH_MAX], why[128], first[PATH_MAX + 128] = "";
  size_t records = 0, evicted = 0;
  cJSON *j = NULL, *r;
  int err = GPUJIT_ENOENT;
  group_memo memo = {.n = 0};

  path_of(path, sizeof(path), c, "manifests", hex);
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
    held_group g;
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
    if (cJSON_IsString(shared) && !group_holds(c, shared->valuestring, &memo, &g, first[0] ? NULL : first, sizeof(first)))
      continue;
    if (gpujit__deps_from_json(&deps, cJSON_GetObjectItemCaseSensitive(r, "deps"), gpujit__cache_base(c)) < 0) {
      gpujit__cache_damaged(c, hex, "manifest dependencies do not parse");
      break;
    }
    ok = gpujit__deps_verify_moved(&deps, &refresh, &moved, first[0] ? NULL : first, sizeof(first)) == 0;
    if (ok && cJSON_IsString(shared) && gpujit__deps_any_once(&deps)) {
      /* identities on both sides as when last checked across: one file as they were; else checked */
      const char *kept = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "shared_ids"));
      group_print(c, &g, &memo);
      if (moved || !g.print[0] || !kept || strcmp(kept, g.print) != 0) {
        ok = identities_hold_across(c, shared->valuestring, &deps, first[0] ? NULL : first, sizeof(first));
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
    path_of(path, sizeof(path), c, "deps", digest.hex);
    if (!group_readable(path) && (err = write_group(c, path, shared)) < 0)
      goto done;
    gpujit__head_held(c, digest.hex);
  }
  cJSON_AddItemToObject(r, "deps", gpujit__deps_to_json(deps));
  /* Earlier records of other entries follow, newest first. */
  path_of(path, sizeof(path), c, "manifests", hex);
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
  path_of(path, sizeof(path), c, "manifests", hex);
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

bool gpujit__group_same(gpujit_cache *c, const char *digest, const void *data, size_t len)
{
  char path[PATH_MAX];
  gpujit__buf b = {0};
  bool same;
  path_of(path, sizeof(path), c, "deps", digest);
  same = gpujit__file_read(&b, path) == 0 && b.len == len && memcmp(b.data, data, len) == 0;
  gpujit__buf_free(&b);
  gpujit_error_clear();
  return same;
}

int gpujit__group_import(gpujit_cache *c, const char *digest, const gpujit__deps *group, char *why, size_t n)
{
  char path[PATH_MAX];
  gpujit__hasher *h = gpujit__hasher_new();
  gpujit__key got;
  if (!h)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  gpujit__deps_hash(group, h, "shared"); /* a group is named by the hash of what it records */
  gpujit__hasher_digest(h, &got);
  gpujit__hasher_free(h);
  if (strcmp(got.hex, digest) != 0) {
    snprintf(why, n, "its content hashes to %s", got.hex);
    return GPUJIT_ECORRUPT;
  }
  if (!c->writable)
    return 0;
  path_of(path, sizeof(path), c, "deps", digest);
  if (group_readable(path))
    return 0; /* the one here records the same */
  return write_group(c, path, group);
}

int gpujit__manifest_refs(gpujit_cache *c, const char *hex, gpujit__strvec *entries, gpujit__strvec *groups)
{
  char path[PATH_MAX], why[128];
  cJSON *j = NULL, *r;
  int err;
  path_of(path, sizeof(path), c, "manifests", hex);
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
