/* A cache entry's dependencies as recorded: files with stat and content hash, absences, non-files,
 * the base pin; what identifies them (their hash). Checked in deps_check.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "cache/deps.h"

/* Timestamps closer than this to the moment a file was read cannot stand for its content. */
#define RACE_NS 1000000000LL

int64_t gpujit__deps_clock(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool gpujit__deps_old_enough(int64_t mtime, int64_t ctime, int64_t read_start)
{
  return mtime + RACE_NS < read_start && ctime + RACE_NS < read_start;
}

void gpujit__deps_set_stat(gpujit__dep *e, const struct stat *st, int64_t read_start)
{
  e->size = (uint64_t)st->st_size;
  e->ino = (uint64_t)st->st_ino;
  e->mtime_ns = gpujit__ns(st->st_mtim);
  e->ctime_ns = gpujit__ns(st->st_ctim);
  e->trusted = gpujit__deps_old_enough(e->mtime_ns, e->ctime_ns, read_start);
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
  gpujit__hash_hex(e->hash, data, size);
  e->size = size;
  if (stat(path, &st) == 0) {
    e->dev = (uint64_t)st.st_dev;
    e->ino_now = (uint64_t)st.st_ino;
    if ((uint64_t)st.st_size == size)
      gpujit__deps_set_stat(e, &st, read_start);
  }
  /* else: it changed since it was read; untrusted: every lookup hashes it */
  return 0;
}

void gpujit__deps_stamp_dir(gpujit__dep *e)
{
  struct stat st;
  e->trusted = false;
  if (stat(e->path, &st) == 0 && S_ISDIR(st.st_mode))
    gpujit__deps_set_stat(e, &st, gpujit__deps_clock());
}

bool gpujit__deps_name_exists(const char *dir, const char *name, size_t len)
{
  char p[PATH_MAX];
  struct stat st;
  snprintf(p, sizeof(p), "%s/%.*s", dir, (int)len, name);
  return stat(p, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

bool gpujit__deps_name_entry(const char *dir, const char *name, size_t len)
{
  char p[PATH_MAX];
  struct stat st;
  snprintf(p, sizeof(p), "%s/%.*s", dir, (int)len, name);
  return lstat(p, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
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
    gpujit__deps_stamp_dir(e); /* first the stamp, then the check: a creation in between changes the stamp */
  }
  n = e->names ? strlen(e->names) : 0;
  for (const char *p = e->names; p && *p;) { /* each name once: a search asks for cuda/ hundreds of times */
    size_t len = strcspn(p, "/");
    if (len == strlen(name) && !strncmp(p, name, len))
      return 0;
    p += len + (p[len] == '/');
  }
  if (!(names = realloc(e->names, n + strlen(name) + 2)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  sprintf(names + n, "%s/", name);
  e->names = names;
  /* it is there after all, or an entry is (a dangling link, whose target may appear without the
   * directory changing): the directory cannot vouch, and each lookup looks at the name itself */
  if (gpujit__deps_name_entry(e->path, name, strlen(name)))
    e->trusted = false;
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

int gpujit__deps_add_error(gpujit__deps *d, const char *path, const char *base, int err)
{
  gpujit__dep *e = gpujit__deps_push(d, path, base);
  if (!e)
    return GPUJIT_ENOMEM;
  e->err = err;
  return 0;
}

int gpujit__deps_add_env(gpujit__deps *d, const char *name, const char *value)
{
  gpujit__dep *e = gpujit__deps_push_as(d, name, name);
  if (!e)
    return GPUJIT_ENOMEM;
  e->env = true;
  e->unset = value == NULL;
  if (value)
    gpujit__hash_hex(e->hash, value, strlen(value));
  return 0;
}

void gpujit__deps_free(gpujit__deps *d)
{
  for (size_t i = 0; i < d->count; i++) {
    if (d->items[i].borrowed)
      continue; /* in `keep` */
    free(d->items[i].path); /* and rel, in the same block */
    free(d->items[i].names);
  }
  free(d->items);
  gpujit__buf_free(&d->keep);
  memset(d, 0, sizeof(*d));
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
    if (e->err) {
      snprintf(same, sizeof(same), "%d", e->err);
      gpujit__hasher_str(h, "errno", same);
      continue;
    }
    if (e->env) {
      gpujit__hasher_str(h, "env", e->unset ? "" : e->hash);
      continue;
    }
    gpujit__hasher_str(h, e->absent ? "absent" : "content", e->absent ? e->names : e->hash);
    snprintf(same, sizeof(same), "%u", e->same);
    if (e->same)
      gpujit__hasher_str(h, "same", same);
  }
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
    if (!d->items[i].absent && !d->items[i].nofile && !d->items[i].err && !d->items[i].env && d->items[i].ino_now)
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
int gpujit__deps_identities_hold(gpujit__deps *d)
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
