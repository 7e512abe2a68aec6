/* A cache entry's dependencies as recorded: files with stat and content hash, absences, non-files,
 * the base pin; what identifies them (their hash). Checked in deps_check.c and deps_share.c. */
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
#include "cache/records/deps.h"

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
  e->dev = (uint64_t)st->st_dev;
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
  return gpujit__deps_add_file_at(d, path, base, data, size, read_start, NULL);
}

int gpujit__deps_add_file_at(gpujit__deps *d, const char *path, const char *base, const void *data, size_t size,
                             int64_t read_start, const struct stat *after)
{
  struct stat st;
  bool defines = false;
  gpujit__dep *e = gpujit__deps_push(d, path, base);
  if (!e)
    return GPUJIT_ENOMEM;
  gpujit__hash_hex(e->hash, data, size);
  e->size = size;
  e->once = gpujit__deps_scan_once(data, size, &defines);
  d->once_macro |= defines;
  if (after || stat(path, &st) == 0) {
    if (!after)
      after = &st;
    e->dev_now = (uint64_t)after->st_dev;
    e->ino_now = (uint64_t)after->st_ino;
    if ((uint64_t)after->st_size == size)
      gpujit__deps_set_stat(e, after, read_start);
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

void gpujit__deps_free(gpujit__deps *d)
{
  for (size_t i = 0; i < d->count; i++) {
    if (d->items[i].borrowed)
      continue; /* in `keep` */
    free(d->items[i].path); /* and rel, in the same block */
    free(d->items[i].names);
    free(d->items[i].with);
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
    if (e->once) /* whether its identity is compared is part of what the record says */
      gpujit__hasher_str(h, "once", "");
    if (e->same)
      gpujit__hasher_str(h, "same", same);
    if (e->with)
      gpujit__hasher_str(h, "with", e->with);
    if (e->once && e->programs) {
      snprintf(same, sizeof(same), "%u", (unsigned)e->programs);
      gpujit__hasher_str(h, "programs", same);
    }
  }
}

/* ---- identity: the files `#pragma once` could take as one ---------------------------------- */

static bool ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* Whether the _Pragma ending at `k` takes a plain string literal: `once` in it is seen as an
 * identifier. Any other operand (a stringized parameter, a macro's expansion, `_Pragma` itself
 * passed on) is made by the preprocessor, where pasting (on ## ce) can make `once` that the
 * text never names. */
static bool literal_operand(const char *p, size_t k, size_t n)
{
  while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r' || p[k] == '\n' || p[k] == '\\'))
    k++;
  if (k >= n || p[k] != '(')
    return false;
  for (k++; k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r' || p[k] == '\n' || p[k] == '\\'); k++)
    ;
  while (k < n && (p[k] == 'L' || p[k] == 'u' || p[k] == 'U' || p[k] == '8' || p[k] == 'R')) /* an encoding prefix */
    k++;
  return k < n && p[k] == '"';
}

bool gpujit__deps_scan_once(const char *p, size_t n, bool *defines)
{
  bool found = false, define = false, line_start = true;
  *defines = false;
  /* only the identifiers `once` and `_Pragma` find anything: a text holding neither (most of
   * CUB's headers) needs no lexing, which took half of what a miss's record of CUB cost */
  if (!memmem(p, n, "once", 4) && !memmem(p, n, "_Pragma", 7))
    return false;
  for (size_t i = 0; i < n;) {
    char c = p[i];
    if (c == '\n') { /* a logical line ends where no backslash continues it */
      define = define && i > 0 && p[i - 1] == '\\';
      line_start = !define;
      i++;
    } else if (c == '/' && i + 1 < n && p[i + 1] == '/') {
      while (i < n && (p[i] != '\n' || p[i - 1] == '\\'))
        i++;
    } else if (c == '/' && i + 1 < n && p[i + 1] == '*') {
      const char *end = i + 2 < n ? memmem(p + i + 2, n - i - 2, "*/", 2) : NULL;
      i = end ? (size_t)(end - p) + 2 : n;
    } else if (c == '#' && line_start) { /* a directive: is it a #define? */
      size_t k = i + 1;
      while (k < n && (p[k] == ' ' || p[k] == '\t'))
        k++;
      define = n - k >= 6 && !memcmp(p + k, "define", 6) && (n - k == 6 || !ident_char(p[k + 6]));
      line_start = false;
      i = k;
    } else if (ident_char(c)) { /* an identifier (or a number), also inside a string: _Pragma("once") */
      size_t k = i;
      while (k < n && ident_char(p[k]))
        k++;
      if ((k - i == 4 && !memcmp(p + i, "once", 4)) || (k - i == 7 && !memcmp(p + i, "_Pragma", 7) && !literal_operand(p, k, n))) {
        found = true;
        *defines |= define;
      }
      line_start = false;
      i = k;
    } else {
      line_start = line_start && (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v');
      i++;
    }
  }
  return found;
}

void gpujit__deps_all_once(gpujit__deps *d)
{
  for (size_t i = 0; i < d->count; i++)
    d->items[i].once = !d->items[i].absent && !d->items[i].nofile && !d->items[i].pin;
}

bool gpujit__deps_any_once(const gpujit__deps *d)
{
  for (size_t i = 0; i < d->count; i++)
    if (d->items[i].once)
      return true;
  return false;
}

int gpujit__deps_stat_identities(gpujit__deps *d)
{
  struct stat st;
  for (size_t i = 0; i < d->count; i++) {
    gpujit__dep *e = &d->items[i];
    if (!e->once)
      continue;
    if (stat(e->path, &st) != 0)
      return GPUJIT_ENOENT;
    e->dev_now = (uint64_t)st.st_dev;
    e->ino_now = (uint64_t)st.st_ino;
  }
  return 0;
}

/* The bytes an identity print hashes: each `once` file's device and inode, little-endian. */
int gpujit__deps_print_put(gpujit__buf *b, uint64_t dev, uint64_t ino)
{
  unsigned char v[16];
  for (int k = 0; k < 8; k++) {
    v[k] = (unsigned char)(dev >> (8 * k));
    v[8 + k] = (unsigned char)(ino >> (8 * k));
  }
  return gpujit__buf_put(b, v, sizeof(v));
}

void gpujit__deps_identity_print(const gpujit__deps *d, char out[33])
{
  gpujit__buf b = {0};
  int err = 0;
  for (size_t i = 0; i < d->count && err == 0; i++)
    if (d->items[i].once)
      err = gpujit__deps_print_put(&b, d->items[i].dev_now, d->items[i].ino_now);
  if (err == 0)
    gpujit__hash_hex(out, b.data ? b.data : "", b.len);
  else
    out[0] = '\0'; /* out of memory: no print, which no entry's equals */
  gpujit_error_clear();
  gpujit__buf_free(&b);
}

/* A `once` file of either set, its identity now and the class it was recorded in. */
typedef struct ident {
  uint64_t dev, ino, label;
  uint32_t programs; /* the programs that read it, every one as all bits */
} ident;

/* An LTO module's sources are separate programs: `#pragma once` compares the files of one
 * program only, so two files of one identity matter to each other only where some program reads
 * both (a record's `programs` 0: every program). */
static uint32_t programs_of(uint32_t programs) { return programs ? programs : UINT32_MAX; }

enum { OWN_SAME = 1, OWN_ALONE, OWN_WITH, SHARED_SAME, SHARED_ALONE }; /* a label's kind: its top byte */
#define LABEL(kind, v) ((uint64_t)(kind) << 56 | (uint64_t)(v))

static int by_identity(const void *a, const void *b)
{
  const ident *x = a, *y = b;
  if (x->dev != y->dev)
    return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino)
    return x->ino < y->ino ? -1 : 1;
  return (x->label > y->label) - (x->label < y->label);
}

static int by_label(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static uint64_t shared_label(const gpujit__deps *s, size_t k)
{
  return s->items[k].same ? LABEL(SHARED_SAME, s->items[k].same) : LABEL(SHARED_ALONE, k);
}

/* The index of the `once` record of `s` recorded as `rel`; s->count when none. */
static size_t find_rel(const gpujit__deps *s, const char *rel)
{
  for (size_t k = 0; k < s->count; k++)
    if (s->items[k].once && s->items[k].rel && !strcmp(s->items[k].rel, rel))
      return k;
  return s->count;
}

/* The `once` files of `d` (and `shared`) with their identity now and recorded class; *n set.
 * NULL: out of memory, or (*n == SIZE_MAX) a link to a record `shared` does not hold. */
static ident *identities(const gpujit__deps *d, const gpujit__deps *shared, size_t *n)
{
  size_t total = d->count + (shared ? shared->count : 0);
  ident *v = malloc((total ? total : 1) * sizeof(*v));
  *n = 0;
  if (!v)
    return NULL;
  for (size_t i = 0; i < d->count; i++) {
    const gpujit__dep *e = &d->items[i];
    uint64_t label = e->same ? LABEL(OWN_SAME, e->same) : LABEL(OWN_ALONE, i);
    if (!e->once)
      continue;
    if (e->with && shared) {
      size_t k = find_rel(shared, e->with);
      if (k == shared->count) {
        free(v);
        *n = SIZE_MAX;
        return NULL;
      }
      label = shared_label(shared, k);
    } else if (e->with) /* the links to one record are one class: numbered by the first */
      for (size_t k = 0; k <= i; k++)
        if (d->items[k].once && d->items[k].with && !strcmp(d->items[k].with, e->with)) {
          label = LABEL(OWN_WITH, k);
          break;
        }
    v[(*n)++] = (ident){e->dev_now, e->ino_now, label, programs_of(e->programs)};
  }
  for (size_t k = 0; shared && k < shared->count; k++)
    if (shared->items[k].once)
      v[(*n)++] = (ident){shared->items[k].dev_now, shared->items[k].ino_now, shared_label(shared, k), UINT32_MAX};
  qsort(v, *n, sizeof(*v), by_identity);
  return v;
}

/* Number the `m` files of one identity in `v` (of `d`, labelled by index) into classes: the
 * files some program reads together, joined through the programs they share; a class of two or
 * more takes the next number of `*group`. `taken` (m entries) is scratch. */
static void number_run(gpujit__deps *d, const ident *v, size_t m, bool *taken, unsigned *group)
{
  memset(taken, 0, m * sizeof(*taken));
  for (size_t k = 0; k < m; k++) {
    uint32_t programs = v[k].programs;
    size_t members = 1;
    bool grew = true;
    if (taken[k])
      continue;
    taken[k] = true;
    while (grew) { /* what the class's programs reach, until nothing more joins */
      grew = false;
      for (size_t x = k + 1; x < m; x++)
        if (!taken[x] && (v[x].programs & programs)) {
          taken[x] = grew = true;
          programs |= v[x].programs;
          members++;
        }
    }
    if (members < 2)
      continue;
    ++*group;
    for (size_t x = k; x < m; x++) /* the class: those taken now, whose programs it holds */
      if (taken[x] && (v[x].programs & programs) && !d->items[v[x].label & ((1ULL << 56) - 1)].same)
        d->items[v[x].label & ((1ULL << 56) - 1)].same = *group;
  }
}

/* Number the files of one identity (two or more) among the `once` files of `d`, from 1: those
 * one program could take as one. */
static int number(gpujit__deps *d)
{
  size_t n;
  unsigned group = 0;
  ident *v;
  bool *taken;
  for (size_t i = 0; i < d->count; i++)
    d->items[i].same = 0;
  if (!(v = identities(d, NULL, &n)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (!(taken = malloc((n ? n : 1) * sizeof(*taken)))) {
    free(v);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && v[j].dev == v[i].dev && v[j].ino == v[i].ino)
      j++;
    number_run(d, v + i, j - i, taken, &group);
    i = j;
  }
  free(taken);
  free(v);
  return 0;
}

int gpujit__deps_identities(gpujit__deps *d, gpujit__deps *shared)
{
  int err;
  for (size_t i = 0; i < d->count; i++) {
    gpujit__dep *e = &d->items[i];
    free(e->with);
    e->with = NULL;
    for (size_t k = 0; e->once && e->ino_now && shared && k < shared->count && !e->with; k++) {
      const gpujit__dep *s = &shared->items[k];
      if (s->once && s->dev_now == e->dev_now && s->ino_now == e->ino_now && !(e->with = gpujit__strdup(s->rel)))
        return GPUJIT_ENOMEM;
    }
  }
  if (shared && (err = number(shared)) < 0)
    return err;
  /* the files one with a shared record are its class, not one of their own */
  for (size_t i = 0; i < d->count; i++)
    d->items[i].once ^= d->items[i].with != NULL;
  err = number(d);
  for (size_t i = 0; i < d->count; i++)
    d->items[i].once |= d->items[i].with != NULL;
  return err;
}

/* After every file was stat'ed: the `once` files that are one file now are exactly those
 * recorded as one — each run of one identity holds one recorded class (or classes no program
 * reads two of: an LTO module's programs apart), and no class is split over two runs. */
int gpujit__deps_identities_hold(gpujit__deps *d, const gpujit__deps *shared)
{
  size_t n, nruns = 0;
  ident *v = identities(d, shared, &n);
  uint64_t *runs;
  int err = 0;
  if (!v)
    return n == SIZE_MAX ? GPUJIT_ENOENT : GPUJIT_ENOMEM;
  if (!(runs = malloc((n ? n : 1) * sizeof(*runs)))) {
    free(v);
    return GPUJIT_ENOMEM;
  }
  for (size_t i = 0; i < n && err == 0;) {
    size_t j = i + 1;
    while (j < n && v[j].dev == v[i].dev && v[j].ino == v[i].ino)
      j++;
    uint32_t before = 0; /* the programs of the run's classes so far */
    for (size_t a = i; a < j && err == 0;) { /* sorted by label within the run: class by class */
      size_t b = a;
      uint32_t programs = 0;
      while (b < j && v[b].label == v[a].label)
        programs |= v[b++].programs;
      if (programs & before) /* two classes in one file, where one program reads both */
        err = GPUJIT_ENOENT;
      before |= programs;
      runs[nruns++] = v[a].label;
      a = b;
    }
    i = j;
  }
  qsort(runs, nruns, sizeof(*runs), by_label);
  for (size_t i = 1; i < nruns && err == 0; i++)
    if (runs[i] == runs[i - 1]) /* one class in two files */
      err = GPUJIT_ENOENT;
  free(runs);
  free(v);
  return err;
}
