/* A cache entry's dependencies: recorded with stat and content hash, verified cheaply. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
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

gpujit__dep *gpujit__deps_push_as(gpujit__deps *d, const char *path, const char *rel)
{
  gpujit__dep *e = gpujit__grow(d->items, &d->cap, d->count, sizeof(*e), 16);
  size_t np = strlen(path) + 1, nr = strlen(rel) + 1;
  char *block;
  if (!e)
    return NULL;
  d->items = e;
  /* one allocation for both strings: a lookup reads hundreds of records */
  if (!(block = malloc(np + nr))) {
    gpujit__error(GPUJIT_ENOMEM, "out of memory");
    return NULL;
  }
  e = &d->items[d->count++];
  memset(e, 0, sizeof(*e));
  e->path = memcpy(block, path, np);
  e->rel = memcpy(block + np, rel, nr);
  return e;
}

gpujit__dep *gpujit__deps_push(gpujit__deps *d, const char *path, const char *base)
{
  const char *rel = gpujit__path_under(path, base);
  char dotted[PATH_MAX + 2];
  if (!rel)
    rel = base && *base && strcmp(path, base) == 0 ? "." : path;
  /* relative to the working directory, as NVRTC named it: kept apart from base-relative paths */
  if (path[0] != '/' && strncmp(path, "./", 2) != 0) {
    snprintf(dotted, sizeof(dotted), "./%s", path);
    rel = dotted;
  }
  return gpujit__deps_push_as(d, path, rel);
}

int gpujit__deps_add_file(gpujit__deps *d, const char *path, const char *base, const void *data, size_t size,
                          int64_t read_start)
{
  struct stat st;
  gpujit__dep *e = gpujit__deps_push(d, path, base);
  if (!e)
    return GPUJIT_ENOMEM;
  hash_hex(e->hash, data, size);
  e->size = size;
  if (stat(path, &st) == 0) {
    e->dev = (uint64_t)st.st_dev;
    e->ino_now = (uint64_t)st.st_ino;
    if ((uint64_t)st.st_size == size)
      set_stat(e, &st, read_start);
  }
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
    if (!(e = gpujit__deps_push(d, dir, base)))
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

int gpujit__deps_add_pin(gpujit__deps *d, const char *base)
{
  gpujit__dep *e = gpujit__deps_push(d, base && *base ? base : "/", NULL);
  if (!e)
    return GPUJIT_ENOMEM;
  e->pin = true;
  return 0;
}

int gpujit__deps_add_nofile(gpujit__deps *d, const char *path, const char *base)
{
  gpujit__dep *e = gpujit__deps_push(d, path, base);
  if (!e)
    return GPUJIT_ENOMEM;
  e->nofile = true;
  return 0;
}

static int by_identity(const void *a, const void *b)
{
  const gpujit__dep *x = *(gpujit__dep *const *)a, *y = *(gpujit__dep *const *)b;
  if (x->dev != y->dev)
    return x->dev < y->dev ? -1 : 1;
  return (x->ino_now > y->ino_now) - (x->ino_now < y->ino_now);
}

/* The files in identity order (device, inode as last seen); *n set. NULL: out of memory. */
static gpujit__dep **identity_order(gpujit__deps *d, size_t *n)
{
  gpujit__dep **v = malloc((d->count ? d->count : 1) * sizeof(*v));
  *n = 0;
  if (!v)
    return NULL;
  for (size_t i = 0; i < d->count; i++)
    if (!d->items[i].absent && !d->items[i].nofile && d->items[i].ino_now)
      v[(*n)++] = &d->items[i];
  qsort(v, *n, sizeof(*v), by_identity);
  return v;
}

void gpujit__deps_identities(gpujit__deps *d)
{
  size_t n, group = 0;
  gpujit__dep **v = identity_order(d, &n);
  for (size_t i = 0; v && i < n;) {
    size_t j = i + 1;
    while (j < n && by_identity(&v[i], &v[j]) == 0)
      j++;
    if (j - i > 1)
      for (group++; i < j; i++)
        v[i]->same = (unsigned)group;
    i = j;
  }
  free(v);
}

static int cmp_unsigned(const void *a, const void *b)
{
  unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
  return (x > y) - (x < y);
}

/* After every file was stat'ed: the files that are one file now are exactly those recorded as
 * one — each run of one identity is one recorded group (or a lone file recorded alone), and no
 * group is split over two runs. */
static int identities_hold(gpujit__deps *d)
{
  size_t n, nruns = 0;
  gpujit__dep **v = identity_order(d, &n);
  unsigned *runs = v ? malloc((n ? n : 1) * sizeof(*runs)) : NULL;
  int err = 0;
  if (!runs) {
    free(v);
    return GPUJIT_ENOMEM;
  }
  for (size_t i = 0; i < n && err == 0;) {
    size_t j = i + 1;
    while (j < n && by_identity(&v[i], &v[j]) == 0)
      j++;
    for (size_t k = i; k < j; k++)
      if (v[k]->same != v[i]->same || (j - i > 1) != (v[i]->same != 0))
        err = GPUJIT_ENOENT;
    if (v[i]->same)
      runs[nruns++] = v[i]->same;
    i = j;
  }
  qsort(runs, nruns, sizeof(*runs), cmp_unsigned);
  for (size_t i = 1; i < nruns && err == 0; i++)
    if (runs[i] == runs[i - 1])
      err = GPUJIT_ENOENT;
  free(runs);
  free(v);
  return err;
}

void gpujit__deps_free(gpujit__deps *d)
{
  for (size_t i = 0; i < d->count; i++) {
    free(d->items[i].path); /* and rel, in the same block */
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

/* Stats of many files in few directories: each through its directory, opened once (the kernel
 * then walks one component, not the whole path; a CUB module's 600 toolkit headers lie in ~50). */
typedef struct dir_cursor {
  char dir[PATH_MAX];
  size_t len;
  int fd;
} dir_cursor;

static int stat_in(dir_cursor *cur, const char *path, struct stat *st)
{
  const char *slash = strrchr(path, '/');
  size_t len = slash ? (size_t)(slash - path) : 0;
  if (!slash || len == 0 || len >= sizeof(cur->dir))
    return stat(path, st);
  if (cur->fd < 0 || cur->len != len || memcmp(cur->dir, path, len) != 0) {
    if (cur->fd >= 0)
      close(cur->fd);
    memcpy(cur->dir, path, len);
    cur->dir[len] = '\0';
    cur->len = len;
    cur->fd = open(cur->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  return cur->fd >= 0 ? fstatat(cur->fd, slash + 1, st, 0) : stat(path, st);
}

static int by_path(const void *a, const void *b)
{
  return strcmp((*(gpujit__dep *const *)a)->path, (*(gpujit__dep *const *)b)->path);
}

/* `*moved` is set when a file's identity may differ from the one recorded (an untrusted record,
 * another inode): only then can files have become one, or stopped being one. */
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

static int verify_one(gpujit__dep *e, dir_cursor *cur, bool *refresh, bool *moved, char *why, size_t n)
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
  if (stat_in(cur, e->path, &st) != 0)
    return changed(why, n, e, "was removed");
  e->dev = (uint64_t)st.st_dev;
  e->ino_now = (uint64_t)st.st_ino;
  if (!e->trusted || e->ino != e->ino_now)
    *moved = true;
  if ((uint64_t)st.st_size != e->size)
    return changed(why, n, e, "changed (content: its size)"); /* a different size is a different content */
  if (e->trusted && same_stat(e, &st))
    return 0;
  return content_matches(e, refresh) ? 0 : changed(why, n, e, "changed (content)");
}

/* A slice of the dependencies, checked by one thread. */
typedef struct slice {
  gpujit__dep **items;
  size_t count;
  bool refresh, moved;
  int err;
  int *stop; /* another slice failed: the outcome is known (read and written atomically) */
  char why[PATH_MAX + 96];
} slice;

static void *verify_slice(void *arg)
{
  slice *s = arg;
  dir_cursor cur = {.fd = -1};
  for (size_t i = 0; i < s->count && s->err == 0 && !__atomic_load_n(s->stop, __ATOMIC_RELAXED); i++)
    s->err = verify_one(s->items[i], &cur, &s->refresh, &s->moved, s->why, sizeof(s->why));
  if (s->err)
    __atomic_store_n(s->stop, 1, __ATOMIC_RELAXED);
  if (cur.fd >= 0)
    close(cur.fd);
  return NULL;
}

/* Threads for a toolkit group's hundreds of stats: each costs 1-2 us of kernel path work and
 * they do not wait on each other. Small sets stay on the caller's thread. */
#define PER_THREAD 128
#define MAX_THREADS 4

int gpujit__deps_verify(gpujit__deps *d, bool *refresh) { return gpujit__deps_verify_why(d, refresh, NULL, 0); }

int gpujit__deps_verify_why(gpujit__deps *d, bool *refresh, char *why, size_t why_size)
{
  gpujit__dep *few[8], **order = d->count > 8 ? malloc(d->count * sizeof(*order)) : few;
  slice parts[MAX_THREADS];
  pthread_t tid[MAX_THREADS];
  bool started[MAX_THREADS] = {false}, moved = false;
  int stop = 0;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t n = d->count / PER_THREAD + 1, at = 0;
  int err = 0;
  *refresh = false;
  if (!order)
    return GPUJIT_ENOMEM; /* unverified: not a hit */
  for (size_t i = 0; i < d->count; i++)
    order[i] = &d->items[i];
  qsort(order, d->count, sizeof(*order), by_path); /* directory order; the outcome does not depend on it */
  if (n > MAX_THREADS)
    n = MAX_THREADS;
  if (cpus > 0 && n > (size_t)cpus)
    n = (size_t)cpus;
  for (size_t t = 0; t < n; t++) {
    size_t len = d->count / n + (t < d->count % n);
    parts[t] = (slice){order + at, len, false, false, 0, &stop, ""};
    at += len;
  }
  for (size_t t = 1; t < n; t++)
    started[t] = pthread_create(&tid[t], NULL, verify_slice, &parts[t]) == 0;
  for (size_t t = 0; t < n; t++) {
    if (t == 0 || !started[t])
      verify_slice(&parts[t]); /* the first slice here; one whose thread did not start, too */
    else
      pthread_join(tid[t], NULL);
    if (parts[t].err && !err) {
      err = parts[t].err;
      if (why && why_size)
        snprintf(why, why_size, "%s", parts[t].why);
    }
    if (err)
      __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    *refresh |= parts[t].refresh;
    moved |= parts[t].moved;
  }
  if (order != few)
    free(order);
  if (err == 0 && moved) /* every inode as recorded: the files are one file as they were */
    if ((err = identities_hold(d)) != 0 && why && why_size)
      snprintf(why, why_size, "headers that were one file (a link) are not now, or the other way round");
  return err;
}

void gpujit__deps_hash(const gpujit__deps *d, gpujit__hasher *h, const char *label)
{
  for (size_t i = 0; i < d->count; i++) {
    const gpujit__dep *e = &d->items[i];
    char same[16];
    gpujit__hasher_str(h, label, e->rel);
    if (e->pin) {
      gpujit__hasher_str(h, "pin", "");
      continue;
    }
    if (e->nofile) {
      gpujit__hasher_str(h, "nofile", "");
      continue;
    }
    gpujit__hasher_str(h, e->absent ? "absent" : "content", e->absent ? e->names : e->hash);
    snprintf(same, sizeof(same), "%u", e->same);
    if (e->same)
      gpujit__hasher_str(h, "same", same);
  }
}

