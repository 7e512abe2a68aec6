/* One dependency record checked against the file system, as a lookup does: a file's stat (its
 * content where the stat moved), an absence, a non-file — a record in memory, or one of a group's
 * binary form where it lies. How the records of a check are shared among threads, and the checks'
 * entry points, are in deps_share.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "cache/records/deps.h"
#include "cache/records/deps_check.h"

/* The device with the inode: two filesystems (one mounted over the other, a link retargeted from
 * one to the other) can hold files of equal inode, size and times. */
static bool same_stat(const gpujit__dep *e, const struct stat *st)
{
  return (uint64_t)st->st_dev == e->dev && (uint64_t)st->st_ino == e->ino && gpujit__ns(st->st_mtim) == e->mtime_ns && gpujit__ns(st->st_ctim) == e->ctime_ns;
}

/* Content check: read, hash, compare; on a match, take the current stat if it can be trusted. */
static bool content_matches(gpujit__dep *e, bool *refresh)
{
  gpujit__buf b = {0};
  struct stat before, after;
  char h[33];
  int64_t t = gpujit__deps_clock();
  bool ok;
  if (stat(e->path, &before) != 0 || gpujit__file_read(&b, e->path) < 0) {
    gpujit__buf_free(&b);
    gpujit_error_clear();
    return false;
  }
  gpujit__hash_hex(h, b.data, b.len);
  ok = strcmp(h, e->hash) == 0;
  gpujit__buf_free(&b);
  if (ok && stat(e->path, &after) == 0 && gpujit__ns(after.st_mtim) == gpujit__ns(before.st_mtim) &&
      gpujit__ns(after.st_ctim) == gpujit__ns(before.st_ctim) && gpujit__deps_old_enough(gpujit__ns(after.st_mtim), gpujit__ns(after.st_ctim), t)) {
    bool changed = !e->trusted || !same_stat(e, &after);
    gpujit__deps_set_stat(e, &after, t);
    *refresh |= changed;
  }
  return ok;
}

/* An absent group: its directory's stamp vouches for every name; failing that, each is looked at. */
static bool group_holds(gpujit__dep *e, bool *refresh)
{
  struct stat st;
  bool was = e->trusted;
  if (stat(e->path, &st) != 0)
    return errno == ENOENT || errno == ENOTDIR; /* no directory: nothing in it */
  if (e->trusted && same_stat(e, &st))
    return true;
  for (const char *p = e->names; p && *p;) {
    size_t len = strcspn(p, "/");
    if (gpujit__deps_name_exists(e->path, p, len))
      return false;
    p += len + (p[len] == '/');
  }
  /* Still all absent though the directory changed: take its new stamp, then look again. A name
   * that is an entry (a dangling link) keeps the stamp from vouching: its target may appear. */
  gpujit__deps_stamp_dir(e);
  for (const char *p = e->names; e->trusted && p && *p;) {
    size_t len = strcspn(p, "/");
    if (gpujit__deps_name_exists(e->path, p, len))
      return false;
    if (gpujit__deps_name_entry(e->path, p, len))
      e->trusted = false;
    p += len + (p[len] == '/');
  }
  *refresh |= e->trusted || was;
  return true;
}

static bool same_dir(const char *a, const char *b)
{
  const char *x = strrchr(a, '/'), *y = strrchr(b, '/');
  return x && y && x - a == y - b && memcmp(a, b, (size_t)(x - a)) == 0;
}

/* `len`: the length of `path`'s directory (up to its last '/'), GPUJIT__NO_DIR where it has none. */

static int stat_in(gpujit__dir_cursor *cur, const char *path, size_t len, struct stat *st)
{
  const char *slash = path + len;
  if (len == GPUJIT__NO_DIR || len == 0 || len >= sizeof(cur->dir))
    return stat(path, st);
  if (cur->fd < 0 || cur->len != len || memcmp(cur->dir, path, len) != 0) {
    if (!cur->next || !same_dir(path, cur->next))
      return stat(path, st);
    if (cur->fd >= 0)
      close(cur->fd);
    memcpy(cur->dir, path, len);
    cur->dir[len] = '\0';
    cur->len = len;
    cur->fd = open(cur->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  return cur->fd >= 0 ? fstatat(cur->fd, slash + 1, st, 0) : stat(path, st);
}

int gpujit__deps_by_path(const void *a, const void *b)
{
  return strcmp((*(gpujit__dep *const *)a)->path, (*(gpujit__dep *const *)b)->path);
}

/* A path as a message names it: one relative to the working directory as "./path". */
static const char *shown(const gpujit__dep *e) { return e->rel && !strncmp(e->rel, "./", 2) ? e->rel : e->path; }

/* Why a dependency no longer holds, for a miss's explanation (ninja's -d explain, ccache's log). */
static int changed(char *why, size_t n, const gpujit__dep *e, const char *how)
{
  if (why && n && e->absent) { /* a directory the search passed: one of the names it looked for is there now */
    char names[512] = "";
    size_t k = 0;
    for (const char *c = e->names ? e->names : ""; *c && k + 3 < sizeof(names); c++) /* "a/b/" -> "a or b" */
      if (*c != '/')
        names[k++] = *c;
      else if (c[1] && k + 5 < sizeof(names))
        memcpy(names + k, " or ", 4), k += 4;
    names[k] = '\0';
    snprintf(why, n, "%s now holds %s, which the include search finds first", shown(e), names[0] ? names : "a header");
  } else if (why && n)
    snprintf(why, n, "%s %s", shown(e), how);
  return GPUJIT_ENOENT;
}

/* `*moved` is set when a `once` file's identity may differ from the one recorded (an untrusted
 * record, another device or inode): only then can files have become one, or stopped being one. */
int gpujit__deps_verify_one(gpujit__dep *e, size_t len, gpujit__dir_cursor *cur, bool *refresh, bool *moved,
                            char *why, size_t n)
{
  struct stat st;
  if (e->pin)
    return e->elsewhere ? changed(why, n, e, "is the base directory it was built in, and it names its own path "
                                             "(__FILE__): not served to another base")
                        : 0;
  if (e->absent)
    return group_holds(e, refresh) ? 0 : changed(why, n, e, "");
  if (e->nofile)
    return stat(e->path, &st) == 0 && S_ISREG(st.st_mode) ? changed(why, n, e, "is now a file (the search finds it first)") : 0;
  if (e->err || e->env) /* deps_answers.c */
    return gpujit__deps_answer_holds(e, shown(e), why, n) ? 0 : GPUJIT_ENOENT;
  if (stat_in(cur, e->path, len, &st) != 0)
    return changed(why, n, e, "was removed");
  e->dev_now = (uint64_t)st.st_dev;
  e->ino_now = (uint64_t)st.st_ino;
  if (e->once && (!e->trusted || e->ino != e->ino_now || e->dev != e->dev_now))
    *moved = true;
  if ((uint64_t)st.st_size != e->size)
    return changed(why, n, e, "changed (content: its size)"); /* a different size is a different content */
  if (e->trusted && same_stat(e, &st))
    return 0;
  return content_matches(e, refresh) ? 0 : changed(why, n, e, "changed (content)");
}

/* One exact check of a view's record: the answer a lookup that changes nothing gets. Anything
 * else (untrusted, another stat, a stamp moved) is "not exactly": the full way decides. */
int gpujit__deps_check_rec(const gpujit__deps_rec *r, size_t len, gpujit__dir_cursor *cur)
{
  struct stat st;
  if (stat_in(cur, r->path, len, &st) != 0)
    return r->kind == 'f' || (r->kind == 'a' && errno != ENOENT && errno != ENOTDIR) ? GPUJIT_ENOENT : 0;
  if (r->kind == 'n')
    return S_ISREG(st.st_mode) ? GPUJIT_ENOENT : 0;
  if (!r->trusted || (uint64_t)st.st_dev != r->dev || (uint64_t)st.st_ino != r->ino || gpujit__ns(st.st_mtim) != r->mtime_ns || gpujit__ns(st.st_ctim) != r->ctime_ns)
    return GPUJIT_ENOENT;
  return r->kind == 'a' || (uint64_t)st.st_size == r->size ? 0 : GPUJIT_ENOENT;
}

/* What identifies the `once` files' identities as a view records them (a view that holds exactly). */
int gpujit__deps_view_identity_print(const gpujit__deps_view *v, char out[33])
{
  gpujit__buf b = {0};
  int err = 0;
  for (size_t i = 0; i < v->count && err == 0; i++) {
    gpujit__deps_rec r;
    gpujit__deps_view_rec(v, i, &r);
    if (r.once)
      err = gpujit__deps_print_put(&b, r.dev, r.ino);
  }
  out[0] = '\0';
  if (err == 0)
    gpujit__hash_hex(out, b.data ? b.data : "", b.len);
  gpujit__buf_free(&b);
  return err;
}
