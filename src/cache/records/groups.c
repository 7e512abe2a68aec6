/* Dependency groups: one record of the files many builds share (a toolkit's headers), named by
 * the hash of what it records and written once; a lookup checks each group its manifest names
 * once — in place, in the binary form (cache/records/deps_forms.c), or joined from the check the
 * build began ahead (cache/records/head_start.c) — unless a watcher vouches for it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "cache/records/check_threads.h"
#include "cache/records/group_watch.h"
#include "cache/records/groups.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/store/store.h"
#include "cache/store/total.h"

/* Binary, read in place (cache/records/deps_forms.c). The forms earlier versions wrote
 * (gpujit-deps-1 JSON, -2 text, -3 binary without devices) are not read: such a group misses, as
 * ccache's lookups miss a manifest of an older version, and the build that follows stores the
 * group again in this form. */
#define GROUP_MAGIC "gpujit-deps-4"
static _Thread_local const gpujit__voucher *voucher;

const gpujit__voucher *gpujit__group_voucher(const gpujit__voucher *v)
{
  const gpujit__voucher *old = voucher;
  voucher = v;
  return old;
}

static bool checks_here(void) { return !voucher || (voucher->absent && voucher->absent(voucher->ctx)); }

static int write_group(gpujit_cache *c, const char *path, const gpujit__deps *d)
{
  gpujit__buf b = {0};
  int err = gpujit__deps_to_bin(d, &b);
  if (err == 0)
    err = gpujit__cache_write_record(c, path, GROUP_MAGIC, b.data ? b.data : "", b.len);
  gpujit__buf_free(&b);
  return err;
}

/* A group record's bytes: where its body starts, the checksum holding. A group of an earlier form
 * is refused with `*legacy` its form's number (1 to 3): not damage, a miss. */
static int group_check(const char *data, size_t len, size_t *off, int *legacy, char *why, size_t n)
{
  *legacy = 0;
  if (len > 14 && !strncmp(data, "gpujit-deps-", 12) && data[12] >= '1' && data[12] <= '3' && data[13] == ' ') {
    *legacy = data[12] - '0';
    snprintf(why, n, "of an earlier form (gpujit-deps-%d), no longer read", *legacy);
    return GPUJIT_ECORRUPT;
  }
  return gpujit__blob_check(data, len, off, GROUP_MAGIC, why, n);
}

/* The records of a checked body, read in place: from `owned` (the record's buffer, then handed to
 * `out`) when given, else from a copy. */
static int group_body(const char *body, size_t len, gpujit__buf *owned, gpujit__deps *out)
{
  gpujit__buf copy = {0};
  int err;
  memset(out, 0, sizeof(*out));
  if (!owned && (err = gpujit__buf_put(&copy, body, len)) < 0)
    return err;
  if ((err = gpujit__deps_from_bin(out, owned ? body : copy.data, len)) < 0) {
    gpujit__buf_free(&copy);
    return err;
  }
  out->keep = owned ? *owned : copy;
  if (owned)
    memset(owned, 0, sizeof(*owned));
  return 0;
}

static int group_from(const char *data, size_t len, gpujit__buf *owned, gpujit__deps *out, int *legacy, char *why,
                      size_t n)
{
  size_t off = 0;
  int err = group_check(data, len, &off, legacy, why, n);
  memset(out, 0, sizeof(*out));
  if (err == 0 && (err = group_body(data + off, len - off, owned, out)) == GPUJIT_ECORRUPT)
    snprintf(why, n, "dependency group does not parse");
  return err;
}

int gpujit__group_parse(const char *data, size_t len, gpujit__deps *out, char *why, size_t n)
{
  int legacy;
  return group_from(data, len, NULL, out, &legacy, why, n);
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

static int group_read_form(const char *path, gpujit__deps *out, int *legacy, char *why, size_t n)
{
  gpujit__buf b;
  int err = group_file(&b, path, why, n);
  memset(out, 0, sizeof(*out));
  *legacy = 0;
  if (err == 0)
    err = group_from(b.data, b.len, &b, out, legacy, why, n);
  gpujit__buf_free(&b);
  return err;
}

int gpujit__group_read(const char *path, gpujit__deps *out, char *why, size_t n)
{
  int legacy;
  return group_read_form(path, out, &legacy, why, n);
}

int gpujit__group_load(gpujit_cache *c, const char *digest, gpujit__deps *out, char *why, size_t n)
{
  char path[PATH_MAX];
  memset(out, 0, sizeof(*out));
  if (!gpujit__is_digest(digest, strlen(digest))) {
    snprintf(why, n, "'%.40s' does not name a dependency group", digest);
    return GPUJIT_ENOENT;
  }
  gpujit__cache_record_path(path, sizeof(path), c, "deps", digest);
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

/* A group's records read whole and checked the full way: by content where a stat moved, new
 * stats written back so that the next lookup checks it in place. A group of an earlier form is a
 * miss that says so (not damage): the build that follows stores the group in this form. */
static bool group_holds_whole(gpujit_cache *c, const char *path, const char *digest, char print[33], char *miss,
                              size_t miss_size)
{
  char why[128];
  gpujit__deps deps;
  bool refresh = false, ok = false, moved;
  int legacy, err = group_read_form(path, &deps, &legacy, why, sizeof(why));
  if (err == GPUJIT_ECORRUPT && !legacy)
    gpujit__cache_damaged(c, digest, why);
  if (err < 0) {
    if (legacy && miss && miss_size)
      snprintf(miss, miss_size, "its shared dependency group is %s", why);
    return false;
  }
  ok = gpujit__deps_verify_moved(&deps, &refresh, &moved, miss, miss_size) == 0;
  if (ok) /* the identities as found, before a refresh records them */
    gpujit__deps_identity_print(&deps, print);
  if (ok && refresh && c->writable)
    write_group(c, path, &deps);
  gpujit__deps_free(&deps);
  return ok;
}

int gpujit__group_view(gpujit_cache *c, const char *digest, gpujit__buf *b, gpujit__deps_view *view)
{
  char path[PATH_MAX], why[128];
  size_t off;
  int legacy;
  gpujit__cache_record_path(path, sizeof(path), c, "deps", digest);
  if (group_file(b, path, why, sizeof(why)) == 0 &&
      group_check(b->data, b->len, &off, &legacy, why, sizeof(why)) == 0 &&
      gpujit__deps_view_open(view, b->data + off, b->len - off) == 0)
    return 0;
  gpujit_error_clear();
  return GPUJIT_ENOENT;
}

gpujit__head *gpujit__group_head_start(gpujit_cache *c, const char *hint)
{
  gpujit__head *h = checks_here() ? gpujit__head_open(c, hint) : NULL;
  gpujit__buf b = {0};
  gpujit__deps_view view;
  if (h && gpujit__head_noted(h) && gpujit__check_threads_get().ahead &&
      !gpujit__group_watch_process_holds(gpujit__head_noted(h)) && /* the lookup's answer is at hand */
      gpujit__group_view(c, gpujit__head_noted(h), &b, &view) == 0)
    gpujit__head_begun(h, gpujit__deps_check_ahead(&view, &b));
  gpujit__buf_free(&b);
  return h;
}

/* `out->print`: the group's identity print where the check had its records; else "" (gpujit__group_print). */
bool gpujit__group_holds(gpujit_cache *c, const char *digest, gpujit__head *head, gpujit__group_memo *memo,
                         gpujit__held_group *out, char *miss, size_t miss_size)
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
  /* a voucher vouches only for a group whose identities are as recorded (server/watch.c); so does
   * the process's own watch, from the group's third check in the process on (group_watch.c) */
  if (!(ok = (voucher && voucher->held(voucher->ctx, digest)) ||
             gpujit__group_watch_process_vouch(c, digest, gpujit__group_load))) {
    /* nearly every lookup: every record exactly as recorded, checked where it lies (the bytes go
     * with the check) — begun ahead of the lookup where this thread's build named this group
     * (cache/records/head_start.c); else (a stat moved, a header changed, an earlier form, damage)
     * whole */
    if ((ahead = gpujit__head_take(head, c, digest)) != NULL) {
      gpujit__deps_ahead_print(ahead, out->print); /* while the helpers check */
      exact = gpujit__deps_ahead_join(ahead);
    } else if (gpujit__group_view(c, digest, &b, &view) == 0) {
      gpujit__deps_view_identity_print(&view, out->print);
      exact = gpujit__deps_verify_view(&view, &b);
    }
    gpujit__buf_free(&b);
    gpujit__cache_record_path(path, sizeof(path), c, "deps", digest);
    ok = exact == GPUJIT_ENOENT ? group_holds_whole(c, path, digest, out->print, miss, miss_size) : exact == 0;
    if (ok)
      gpujit__head_held(head, c, digest);
  }
  if (ok && memo->n < sizeof(memo->held) / sizeof(memo->held[0]))
    memo->held[memo->n++] = *out;
  return ok;
}

/* The print of a group that holds exactly as recorded, from its records ("" where they cannot be read). */
void gpujit__group_print(gpujit_cache *c, gpujit__held_group *g, gpujit__group_memo *memo)
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
bool gpujit__group_identities_hold(gpujit_cache *c, const char *digest, gpujit__deps *deps, char *miss, size_t n)
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

bool gpujit__group_same(gpujit_cache *c, const char *digest, const void *data, size_t len)
{
  char path[PATH_MAX];
  gpujit__buf b = {0};
  bool same;
  gpujit__cache_record_path(path, sizeof(path), c, "deps", digest);
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
  gpujit__cache_record_path(path, sizeof(path), c, "deps", digest);
  if (group_readable(path))
    return 0; /* the one here records the same */
  return write_group(c, path, group);
}

int gpujit__group_store(gpujit_cache *c, const char *digest, gpujit__head *head, const gpujit__deps *shared)
{
  char path[PATH_MAX];
  int err = 0;
  gpujit__cache_record_path(path, sizeof(path), c, "deps", digest);
  if (!group_readable(path) && (err = write_group(c, path, shared)) < 0)
    return err;
  gpujit__head_held(head, c, digest);
  return 0;
}
