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

static void set_stat(gpujit__dep *e, const struct stat *st, int64_t read_start)
{
  e->size = (uint64_t)st->st_size;
  e->ino = (uint64_t)st->st_ino;
  e->mtime_ns = ns(st->st_mtim);
  e->ctime_ns = ns(st->st_ctim);
  e->trusted = e->mtime_ns + RACE_NS < read_start && e->ctime_ns + RACE_NS < read_start;
}

static gpujit__dep *push(gpujit__deps *d, const char *path, const char *base)
{
  gpujit__dep *e = gpujit__grow(d->items, &d->cap, d->count, sizeof(*e), 16);
  size_t n = base ? strlen(base) : 0;
  if (!e)
    return NULL;
  d->items = e;
  e = &d->items[d->count];
  memset(e, 0, sizeof(*e));
  e->path = gpujit__strdup(path);
  e->rel = gpujit__strdup(n && strncmp(path, base, n) == 0 && path[n] == '/' ? path + n + 1 : path);
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
  if (stat(path, &st) == 0 && (uint64_t)st.st_size == size)
    set_stat(e, &st, read_start);
  /* else: it changed since it was read; untrusted (size 0, no stat): every lookup hashes it */
  return 0;
}

/* The stamp of `path`'s parent directory, trusted when it is older than the race window. */
static void stamp_parent(gpujit__dep *e, int64_t now)
{
  char dir[PATH_MAX];
  struct stat st;
  snprintf(dir, sizeof(dir), "%s", e->path);
  if (strrchr(dir, '/'))
    *strrchr(dir, '/') = '\0';
  e->dir_trusted = false;
  if (!dir[0] || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return;
  e->dir_ino = (uint64_t)st.st_ino;
  e->dir_mtime_ns = ns(st.st_mtim);
  e->dir_ctime_ns = ns(st.st_ctim);
  e->dir_trusted = e->dir_mtime_ns + RACE_NS < now && e->dir_ctime_ns + RACE_NS < now;
}

int gpujit__deps_add_absent(gpujit__deps *d, const char *path, const char *base)
{
  gpujit__dep *e = push(d, path, base);
  struct stat st;
  if (!e)
    return GPUJIT_ENOMEM;
  e->absent = true;
  /* Stamp the directory first, then check the path: a creation in between changes the stamp. */
  stamp_parent(e, gpujit__deps_clock());
  if (stat(path, &st) == 0)
    e->dir_trusted = false;
  return 0;
}

void gpujit__deps_free(gpujit__deps *d)
{
  for (size_t i = 0; i < d->count; i++) {
    free(d->items[i].path);
    free(d->items[i].rel);
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
      ns(after.st_ctim) == ns(before.st_ctim)) {
    gpujit__dep old = *e;
    set_stat(e, &after, t);
    if (e->trusted && (old.size != e->size || old.ino != e->ino || old.mtime_ns != e->mtime_ns ||
                       old.ctime_ns != e->ctime_ns || !old.trusted))
      *refresh = true;
  }
  return ok;
}

/* Whether an absent path's parent still has its recorded stamp; parents stat'ed once a call. */
typedef struct parent_memo {
  char dir[PATH_MAX];
  struct stat st;
  bool ok;
} parent_memo;

static bool parent_unchanged(const gpujit__dep *e, parent_memo *memo, size_t *n, size_t max)
{
  char dir[PATH_MAX];
  parent_memo *m = NULL;
  if (!e->dir_trusted)
    return false;
  snprintf(dir, sizeof(dir), "%s", e->path);
  if (strrchr(dir, '/'))
    *strrchr(dir, '/') = '\0';
  for (size_t i = 0; i < *n && !m; i++)
    if (strcmp(memo[i].dir, dir) == 0)
      m = &memo[i];
  if (!m) {
    m = &memo[*n < max ? (*n)++ : max - 1];
    snprintf(m->dir, sizeof(m->dir), "%s", dir);
    m->ok = stat(dir, &m->st) == 0;
  }
  return m->ok && (uint64_t)m->st.st_ino == e->dir_ino && ns(m->st.st_mtim) == e->dir_mtime_ns &&
         ns(m->st.st_ctim) == e->dir_ctime_ns;
}

int gpujit__deps_verify(gpujit__deps *d, bool *refresh)
{
  parent_memo memo[8];
  size_t nmemo = 0;
  *refresh = false;
  for (size_t i = 0; i < d->count; i++) {
    gpujit__dep *e = &d->items[i];
    struct stat st;
    if (e->absent) {
      if (parent_unchanged(e, memo, &nmemo, 8))
        continue;
      if (stat(e->path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
        return GPUJIT_ENOENT;
      /* Still absent though its directory changed: take the directory's new stamp. */
      stamp_parent(e, gpujit__deps_clock());
      if (stat(e->path, &st) == 0)
        return GPUJIT_ENOENT;
      *refresh |= e->dir_trusted;
      continue;
    }
    if (stat(e->path, &st) != 0)
      return GPUJIT_ENOENT;
    if (e->trusted && (uint64_t)st.st_size == e->size && (uint64_t)st.st_ino == e->ino &&
        ns(st.st_mtim) == e->mtime_ns && ns(st.st_ctim) == e->ctime_ns)
      continue;
    if ((uint64_t)st.st_size != e->size && e->trusted)
      return GPUJIT_ENOENT; /* a different size is a different content */
    if (!content_matches(e, refresh))
      return GPUJIT_ENOENT;
  }
  return 0;
}

void gpujit__deps_hash(const gpujit__deps *d, gpujit__hasher *h, const char *label)
{
  for (size_t i = 0; i < d->count; i++) {
    gpujit__hasher_str(h, label, d->items[i].rel);
    gpujit__hasher_str(h, d->items[i].absent ? "absent" : "content", d->items[i].absent ? "" : d->items[i].hash);
  }
}

cJSON *gpujit__deps_to_json(const gpujit__deps *d)
{
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < d->count; i++) {
    const gpujit__dep *e = &d->items[i];
    cJSON *o = cJSON_CreateObject();
    char num[32];
    if (!o) {
      cJSON_Delete(arr);
      return NULL;
    }
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "path", e->rel);
    if (e->absent) {
      cJSON_AddTrueToObject(o, "absent");
      if (e->dir_trusted) {
        snprintf(num, sizeof(num), "%llu", (unsigned long long)e->dir_ino);
        cJSON_AddStringToObject(o, "dir_ino", num);
        snprintf(num, sizeof(num), "%lld", (long long)e->dir_mtime_ns);
        cJSON_AddStringToObject(o, "dir_mtime_ns", num);
        snprintf(num, sizeof(num), "%lld", (long long)e->dir_ctime_ns);
        cJSON_AddStringToObject(o, "dir_ctime_ns", num);
      }
      continue;
    }
    cJSON_AddStringToObject(o, "xxh3", e->hash);
    /* 64-bit values as strings: JSON numbers are doubles. */
    snprintf(num, sizeof(num), "%llu", (unsigned long long)e->size);
    cJSON_AddStringToObject(o, "size", num);
    if (e->trusted) {
      snprintf(num, sizeof(num), "%llu", (unsigned long long)e->ino);
      cJSON_AddStringToObject(o, "ino", num);
      snprintf(num, sizeof(num), "%lld", (long long)e->mtime_ns);
      cJSON_AddStringToObject(o, "mtime_ns", num);
      snprintf(num, sizeof(num), "%lld", (long long)e->ctime_ns);
      cJSON_AddStringToObject(o, "ctime_ns", num);
    }
  }
  return arr;
}

static bool num_of(const cJSON *o, const char *key, long long *out)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  char *end;
  if (!cJSON_IsString(v))
    return false;
  errno = 0;
  *out = strtoll(v->valuestring, &end, 10);
  return errno == 0 && end != v->valuestring && *end == '\0';
}

int gpujit__deps_from_json(gpujit__deps *out, const cJSON *arr, const char *base)
{
  const cJSON *o;
  memset(out, 0, sizeof(*out));
  if (!cJSON_IsArray(arr))
    return GPUJIT_ECORRUPT;
  cJSON_ArrayForEach(o, arr) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "path");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "xxh3");
    char path[PATH_MAX];
    gpujit__dep *e;
    long long v;
    if (!cJSON_IsString(p) || !p->valuestring[0])
      goto bad;
    if (p->valuestring[0] == '/' || !base)
      snprintf(path, sizeof(path), "%s", p->valuestring);
    else
      snprintf(path, sizeof(path), "%s/%s", base, p->valuestring);
    if (!(e = push(out, path, NULL)))
      goto bad;
    free(e->rel);
    if (!(e->rel = gpujit__strdup(p->valuestring)))
      goto bad;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "absent"))) {
      long long m, c;
      e->absent = true;
      if (num_of(o, "dir_ino", &v)) {
        if (!num_of(o, "dir_mtime_ns", &m) || !num_of(o, "dir_ctime_ns", &c))
          goto bad;
        e->dir_ino = (uint64_t)v;
        e->dir_mtime_ns = m;
        e->dir_ctime_ns = c;
        e->dir_trusted = true;
      }
      continue;
    }
    if (!cJSON_IsString(h) || strlen(h->valuestring) != 32 || !num_of(o, "size", &v))
      goto bad;
    memcpy(e->hash, h->valuestring, 33);
    e->size = (uint64_t)v;
    if (num_of(o, "ino", &v)) {
      long long m, c;
      if (!num_of(o, "mtime_ns", &m) || !num_of(o, "ctime_ns", &c))
        goto bad;
      e->ino = (uint64_t)v;
      e->mtime_ns = m;
      e->ctime_ns = c;
      e->trusted = true;
    }
  }
  return 0;
bad:
  gpujit__deps_free(out);
  return GPUJIT_ECORRUPT;
}
