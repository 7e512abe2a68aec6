/* A cache entry's dependencies: recorded with stat and content hash, verified cheaply. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "cache/deps.h"

/* Timestamps closer than this to the moment a file was read cannot stand for its content. */
#define RACE_NS 1000000000LL

int64_t gpujit__deps_clock(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t ns(struct timespec t) { return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec; }

static void hash_hex(char out[33], const void *data, size_t size)
{
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(data, size));
  for (int i = 0; i < 16; i++)
    snprintf(out + 2 * i, 3, "%02x", c.digest[i]);
}

static bool old_enough(int64_t mtime, int64_t ctime, int64_t read_start)
{
  return mtime + RACE_NS < read_start && ctime + RACE_NS < read_start;
}

static void set_stat(gpujit__dep *e, const struct stat *st, int64_t read_start)
{
  e->size = (uint64_t)st->st_size;
  e->ino = (uint64_t)st->st_ino;
  e->mtime_ns = ns(st->st_mtim);
  e->ctime_ns = ns(st->st_ctim);
  e->trusted = old_enough(e->mtime_ns, e->ctime_ns, read_start);
}

static bool same_stat(const gpujit__dep *e, const struct stat *st)
{
  return (uint64_t)st->st_ino == e->ino && ns(st->st_mtim) == e->mtime_ns && ns(st->st_ctim) == e->ctime_ns;
}

static gpujit__dep *push(gpujit__deps *d, const char *path, const char *base)
{
  gpujit__dep *e = gpujit__grow(d->items, &d->cap, d->count, sizeof(*e), 16);
  const char *rel = gpujit__path_under(path, base);
  if (!e)
    return NULL;
  d->items = e;
  e = &d->items[d->count];
  memset(e, 0, sizeof(*e));
  if (!rel)
    rel = base && *base && strcmp(path, base) == 0 ? "." : path;
  e->path = gpujit__strdup(path);
  e->rel = gpujit__strdup(rel);
  if (!e->path || !e->rel) {
    free(e->path);
    free(e->rel);
    gpujit__error(GPUJIT_ENOMEM, "out of memory");
    return NULL;
  }
  d->count++;
  return e;
}

int gpujit__deps_add_file(gpujit__deps *d, const char *path, const char *base, const void *data, size_t size,
                          int64_t read_start)
{
  struct stat st;
  gpujit__dep *e = push(d, path, base);
  if (!e)
    return GPUJIT_ENOMEM;
  hash_hex(e->hash, data, size);
  e->size = size;
  if (stat(path, &st) == 0 && (uint64_t)st.st_size == size)
    set_stat(e, &st, read_start);
  /* else: it changed since it was read; untrusted: every lookup hashes it */
  return 0;
}

/* Stamp a group's directory: while its mtime and ctime stand, nothing was created in it. */
static void stamp_dir(gpujit__dep *e)
{
  struct stat st;
  e->trusted = false;
  if (stat(e->path, &st) == 0 && S_ISDIR(st.st_mode))
    set_stat(e, &st, gpujit__deps_clock());
}

static bool name_exists(const char *dir, const char *name, size_t len)
{
  char p[PATH_MAX];
  struct stat st;
  snprintf(p, sizeof(p), "%s/%.*s", dir, (int)len, name);
  return stat(p, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

int gpujit__deps_add_absent(gpujit__deps *d, const char *path, const char *base)
{
  char dir[PATH_MAX];
  const char *name;
  gpujit__dep *e = NULL;
  size_t n;
  char *names;
  snprintf(dir, sizeof(dir), "%s", path);
  if (!strrchr(dir, '/') || !strrchr(dir, '/')[1])
    return gpujit__error(GPUJIT_EINVAL, "%s: not a path of a directory entry", path);
  *strrchr(dir, '/') = '\0';
  if (!dir[0])
    snprintf(dir, sizeof(dir), "/");
  name = strrchr(path, '/') + 1;
  for (size_t i = 0; i < d->count && !e; i++)
    if (d->items[i].absent && strcmp(d->items[i].path, dir) == 0)
      e = &d->items[i];
  if (!e) {
    if (!(e = push(d, dir, base)))
      return GPUJIT_ENOMEM;
    e->absent = true;
    stamp_dir(e); /* first the stamp, then the check: a creation in between changes the stamp */
  }
  n = e->names ? strlen(e->names) : 0;
  if (!(names = realloc(e->names, n + strlen(name) + 2)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  sprintf(names + n, "%s/", name);
  e->names = names;
  if (name_exists(e->path, name, strlen(name)))
    e->trusted = false; /* it is there after all: the directory cannot vouch */
  return 0;
}

void gpujit__deps_free(gpujit__deps *d)
{
  for (size_t i = 0; i < d->count; i++) {
    free(d->items[i].path);
    free(d->items[i].rel);
    free(d->items[i].names);
  }
  free(d->items);
  memset(d, 0, sizeof(*d));
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
  hash_hex(h, b.data ? b.data : "", b.len);
  ok = strcmp(h, e->hash) == 0;
  gpujit__buf_free(&b);
  if (ok && stat(e->path, &after) == 0 && ns(after.st_mtim) == ns(before.st_mtim) &&
      ns(after.st_ctim) == ns(before.st_ctim) && old_enough(ns(after.st_mtim), ns(after.st_ctim), t)) {
    bool changed = !e->trusted || !same_stat(e, &after);
    set_stat(e, &after, t);
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
    if (name_exists(e->path, p, len))
      return false;
    p += len + (p[len] == '/');
  }
  /* Still all absent though the directory changed: take its new stamp, then look again. */
  stamp_dir(e);
  for (const char *p = e->names; e->trusted && p && *p;) {
    size_t len = strcspn(p, "/");
    if (name_exists(e->path, p, len))
      return false;
    p += len + (p[len] == '/');
  }
  *refresh |= e->trusted || was;
  return true;
}

int gpujit__deps_verify(gpujit__deps *d, bool *refresh)
{
  *refresh = false;
  for (size_t i = 0; i < d->count; i++) {
    gpujit__dep *e = &d->items[i];
    struct stat st;
    if (e->absent) {
      if (!group_holds(e, refresh))
        return GPUJIT_ENOENT;
      continue;
    }
    if (stat(e->path, &st) != 0)
      return GPUJIT_ENOENT;
    if ((uint64_t)st.st_size != e->size)
      return GPUJIT_ENOENT; /* a different size is a different content */
    if (e->trusted && same_stat(e, &st))
      continue;
    if (!content_matches(e, refresh))
      return GPUJIT_ENOENT;
  }
  return 0;
}

void gpujit__deps_hash(const gpujit__deps *d, gpujit__hasher *h, const char *label)
{
  for (size_t i = 0; i < d->count; i++) {
    const gpujit__dep *e = &d->items[i];
    gpujit__hasher_str(h, label, e->rel);
    gpujit__hasher_str(h, e->absent ? "absent" : "content", e->absent ? e->names : e->hash);
  }
}

/* Compact on purpose: a lookup parses this; one string per stat, one per group of names. */
cJSON *gpujit__deps_to_json(const gpujit__deps *d)
{
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < d->count; i++) {
    const gpujit__dep *e = &d->items[i];
    cJSON *o = cJSON_CreateObject();
    char st[96];
    if (!o) {
      cJSON_Delete(arr);
      return NULL;
    }
    cJSON_AddItemToArray(arr, o);
    if (e->absent) {
      cJSON_AddStringToObject(o, "dir", e->rel);
      cJSON_AddStringToObject(o, "absent", e->names ? e->names : "");
      if (e->trusted) {
        snprintf(st, sizeof(st), "%llu %lld %lld", (unsigned long long)e->ino, (long long)e->mtime_ns,
                 (long long)e->ctime_ns);
        cJSON_AddStringToObject(o, "stamp", st);
      }
      continue;
    }
    cJSON_AddStringToObject(o, "path", e->rel);
    cJSON_AddStringToObject(o, "xxh3", e->hash);
    /* size inode mtime ctime (ns); the size alone when the stat cannot be trusted */
    if (e->trusted)
      snprintf(st, sizeof(st), "%llu %llu %lld %lld", (unsigned long long)e->size, (unsigned long long)e->ino,
               (long long)e->mtime_ns, (long long)e->ctime_ns);
    else
      snprintf(st, sizeof(st), "%llu", (unsigned long long)e->size);
    cJSON_AddStringToObject(o, "stat", st);
  }
  return arr;
}

int gpujit__deps_from_json(gpujit__deps *out, const cJSON *arr, const char *base)
{
  const cJSON *o;
  memset(out, 0, sizeof(*out));
  if (!cJSON_IsArray(arr))
    return GPUJIT_ECORRUPT;
  cJSON_ArrayForEach(o, arr) {
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(o, "dir");
    const cJSON *p = cJSON_IsString(dir) ? dir : cJSON_GetObjectItemCaseSensitive(o, "path");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, cJSON_IsString(dir) ? "stamp" : "stat");
    char path[PATH_MAX];
    gpujit__dep *e;
    if (!cJSON_IsString(p) || !p->valuestring[0])
      goto bad;
    if (p->valuestring[0] == '/' || !base)
      snprintf(path, sizeof(path), "%s", p->valuestring);
    else if (strcmp(p->valuestring, ".") == 0)
      snprintf(path, sizeof(path), "%s", base);
    else
      snprintf(path, sizeof(path), "%s/%s", base, p->valuestring);
    if (!(e = push(out, path, NULL)))
      goto bad;
    free(e->rel);
    if (!(e->rel = gpujit__strdup(p->valuestring)))
      goto bad;
    if (cJSON_IsString(dir)) {
      const cJSON *names = cJSON_GetObjectItemCaseSensitive(o, "absent");
      unsigned long long ino;
      long long m, c;
      e->absent = true;
      if (!cJSON_IsString(names) || !(e->names = gpujit__strdup(names->valuestring)))
        goto bad;
      if (cJSON_IsString(st)) {
        if (sscanf(st->valuestring, "%llu %lld %lld", &ino, &m, &c) != 3)
          goto bad;
        e->ino = ino;
        e->mtime_ns = m;
        e->ctime_ns = c;
        e->trusted = true;
      }
      continue;
    }
    {
      const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "xxh3");
      unsigned long long size, ino;
      long long m, c;
      int n;
      if (!cJSON_IsString(h) || strlen(h->valuestring) != 32 || !cJSON_IsString(st))
        goto bad;
      memcpy(e->hash, h->valuestring, 33);
      n = sscanf(st->valuestring, "%llu %llu %lld %lld", &size, &ino, &m, &c);
      if (n != 1 && n != 4)
        goto bad;
      e->size = size;
      if (n == 4) {
        e->ino = ino;
        e->mtime_ns = m;
        e->ctime_ns = c;
        e->trusted = true;
      }
    }
  }
  return 0;
bad:
  gpujit__deps_free(out);
  return GPUJIT_ECORRUPT;
}
