/* The cache's size limit (cache/upkeep/limit.h), on what the cache occupies on disk. The running total
 * lives in `<cache>/size` (cache/store/total.c), updated under flock by every store and record write,
 * so a store knows it passed the limit without listing the cache; eviction lists it (least
 * recently used first: an entry directory's mtime is refreshed on every hit), takes the records
 * only gone entries needed with them, and resets the total to the directory's disk use. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/upkeep/limit.h"
#include "cache/records/manifests.h"
#include "cache/store/total.h"
#include "base/strset.h"
#include "base/units.h"

static int list_record(const char *path, const char *hex, void *payload)
{
  (void)path;
  return gpujit__strvec_push(payload, hex) < 0 ? GPUJIT_ENOMEM : 0;
}

int gpujit_cache_parse_size(const char *s, uint64_t *out) { return gpujit__parse_size(s, out); }

int gpujit_cache_parse_age(const char *s, double *seconds) { return gpujit__parse_age(s, seconds); }

/* The setting kept in the cache is a byte count as gpujit_cache_limit_set() writes it (whole
 * digits): read as bytes, never through the user's parser, where a bare number is GiB. Anything
 * else (written by hand) is read as a user's size. */
static int parse_kept(const char *text, uint64_t *bytes)
{
  size_t digits = strspn(text, "0123456789");
  if (digits && digits < 20 && !text[digits]) {
    *bytes = strtoull(text, NULL, 10);
    return 0;
  }
  return gpujit__parse_size(text, bytes);
}

int gpujit_cache_limit_get(gpujit_cache *c, uint64_t *bytes, const char **source)
{
  const char *env = getenv("GPUJIT_CACHE_MAX_SIZE");
  char p[PATH_MAX];
  gpujit__buf text = {0};
  int err = 0;
  if (!c || !bytes)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_limit_get: NULL argument");
  *bytes = 0;
  if (source)
    *source = "none";
  if (env && *env) {
    if (source)
      *source = "GPUJIT_CACHE_MAX_SIZE";
    if ((err = gpujit_cache_parse_size(env, bytes)) < 0)
      return gpujit__error(err, "GPUJIT_CACHE_MAX_SIZE: %s", gpujit_error_last());
    return 0;
  }
  snprintf(p, sizeof(p), "%s/max_size", c->dir);
  if (gpujit__file_read(&text, p) == 0 && text.data) {
    text.data[strcspn(text.data, "\n")] = '\0';
    if (source)
      *source = "the cache's setting";
    if ((err = parse_kept(text.data, bytes)) < 0)
      err = gpujit__error(err, "%s: %s", p, gpujit_error_last());
  } else {
    gpujit_error_clear();
  }
  gpujit__buf_free(&text);
  return err;
}

int gpujit_cache_limit_set(gpujit_cache *c, uint64_t bytes, uint64_t *removed, uint64_t *freed_bytes)
{
  char p[PATH_MAX], text[32];
  int n, err;
  if (!c)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_limit_set: NULL cache");
  if (!c->writable)
    return gpujit__error(GPUJIT_EIO, "%s: the cache is read-only", c->dir);
  if (removed)
    *removed = 0;
  if (freed_bytes)
    *freed_bytes = 0;
  snprintf(p, sizeof(p), "%s/max_size", c->dir);
  if (bytes == 0) {
    if (unlink(p) < 0 && errno != ENOENT)
      return gpujit__error(GPUJIT_EIO, "%s: %s", p, strerror(errno));
    return 0;
  }
  n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)bytes);
  if ((err = gpujit__file_write_atomic(p, text, (size_t)n)) < 0)
    return err;
  return gpujit__cache_evict(c, bytes, 0, removed, freed_bytes, NULL);
}

/* The records that lead only to entries that are gone (manifests), and the dependency groups no
 * remaining manifest names, go too: they are disk the limit counts. A build racing this loses at
 * most a record, which reads as a miss. */
static void collect_records(gpujit_cache *c)
{
  gpujit__strvec manifests = {0}, groups = {0}, keep = {0};
  gpujit__strset kept = {0};
  char p[PATH_MAX];
  if (gpujit__each_record(c->dir, "manifests", list_record, &manifests) < 0 ||
      gpujit__each_record(c->dir, "deps", list_record, &groups) < 0) {
    gpujit_error_clear(); /* out of memory: nothing is collected this time */
    gpujit__strvec_free(&manifests);
    gpujit__strvec_free(&groups);
    return;
  }
  for (size_t i = 0; i < manifests.count; i++) {
    gpujit__strvec entries = {0}, refs = {0};
    bool live = false;
    if (gpujit__manifest_refs(c, manifests.items[i], &entries, &refs) < 0) {
      gpujit_error_clear(); /* unreadable: its lookup removes it */
      live = true;
    }
    for (size_t e = 0; e < entries.count && !live; e++) {
      gpujit__cache_entry_path(p, sizeof(p), c, entries.items[e]);
      live = gpujit__is_dir(p);
    }
    if (live) {
      for (size_t g = 0; g < refs.count; g++)
        if (gpujit__strvec_push(&keep, refs.items[g]) == 0)
          gpujit__strset_put(&kept, keep.items[keep.count - 1], 0);
    } else {
      snprintf(p, sizeof(p), "%s/manifests/%.2s/%s", c->dir, manifests.items[i], manifests.items[i] + 2);
      unlink(p);
    }
    gpujit__strvec_free(&entries);
    gpujit__strvec_free(&refs);
  }
  for (size_t i = 0; i < groups.count; i++)
    if (!gpujit__strset_find(&kept, groups.items[i], NULL)) {
      snprintf(p, sizeof(p), "%s/deps/%.2s/%s", c->dir, groups.items[i], groups.items[i] + 2);
      unlink(p);
    }
  /* shard directories left empty take a block each */
  for (int w = 0; w < 3; w++) {
    static const char *const tops[] = {"entries", "manifests", "deps"};
    for (int d = 0; d < 256; d++) {
      snprintf(p, sizeof(p), "%s/%s/%02x", c->dir, tops[w], d);
      rmdir(p); /* only where empty */
    }
  }
  gpujit__strset_free(&kept);
  gpujit__strvec_free(&keep);
  gpujit__strvec_free(&manifests);
  gpujit__strvec_free(&groups);
}

typedef struct note {
  char *path;
  time_t mtime;
  uint64_t bytes;
} note;

static int by_age(const void *a, const void *b)
{
  const note *x = a, *y = b;
  return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* Past the limit with no entry left to evict: the notes (compile-time records: hints, never
 * needed for a hit), oldest first, until it fits. @return what is left. */
static uint64_t drop_notes(gpujit_cache *c, uint64_t max_bytes, uint64_t total)
{
  char top[PATH_MAX];
  note *v = NULL;
  size_t n = 0, cap = 0;
  DIR *kinds, *d;
  struct dirent *k, *f;
  snprintf(top, sizeof(top), "%s/notes", c->dir);
  if (!(kinds = opendir(top)))
    return total;
  while ((k = readdir(kinds)) != NULL) {
    char kind[PATH_MAX];
    if (k->d_name[0] == '.')
      continue;
    snprintf(kind, sizeof(kind), "%s/%s", top, k->d_name);
    if (!(d = opendir(kind)))
      continue;
    while ((f = readdir(d)) != NULL) {
      struct stat st;
      char path[PATH_MAX];
      if (f->d_name[0] == '.')
        continue;
      note *grown = gpujit__grow(v, &cap, n, sizeof(*v), 32);
      if (!grown)
        break;
      v = grown;
      snprintf(path, sizeof(path), "%s/%s", kind, f->d_name);
      if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (v[n].path = gpujit__strdup(path)) != NULL) {
        v[n].mtime = st.st_mtime;
        v[n].bytes = (uint64_t)st.st_blocks * 512;
        n++;
      }
    }
    closedir(d);
  }
  qsort(v, n, sizeof(*v), by_age);
  for (size_t i = 0; i < n; i++) {
    if (total > max_bytes && unlink(v[i].path) == 0)
      total = total > v[i].bytes ? total - v[i].bytes : 0;
    free(v[i].path);
  }
  free(v);
  rewinddir(kinds);
  while ((k = readdir(kinds)) != NULL) /* a kind left with no note: its directory's block */
    if (k->d_name[0] != '.') {
      char kind[PATH_MAX];
      snprintf(kind, sizeof(kind), "%s/%s", top, k->d_name);
      rmdir(kind); /* only where empty */
    }
  closedir(kinds);
  gpujit_error_clear();
  return total;
}

/* Under the size file's lock (held by the caller, or none). The total is the whole cache
 * directory's disk use: entries, records, notes and settings alike. */
static int evict(gpujit_cache *c, uint64_t max_bytes, double older_than_s, uint64_t *removed, uint64_t *freed,
                 uint64_t *left)
{
  gpujit__entry_list list = {0};
  char p[PATH_MAX];
  uint64_t total, n = 0, f = 0;
  size_t all;
  time_t now = time(NULL);
  int err;
  if ((err = gpujit__entries(&list, c->dir, true)) < 0) /* most recently used first */
    return err;
  total = gpujit__dir_bytes(c->dir);
  for (size_t k = list.count; k-- > 0;) {
    gpujit__entry *e = &list.items[k];
    bool old = older_than_s > 0 && difftime(now, (time_t)e->pub.last_used) > older_than_s;
    bool big = max_bytes > 0 && total > max_bytes;
    if (!old && !big)
      continue;
    gpujit__cache_entry_path(p, sizeof(p), c, e->hex);
    if (gpujit__remove_entry(c->dir, p) == 0) {
      n++;
      f += e->bytes;
      total = total > e->bytes ? total - e->bytes : 0;
    } else {
      gpujit_error_clear(); /* in use, or gone already: passed over */
    }
  }
  all = list.count;
  gpujit__entry_list_free(&list);
  if (n) { /* `total` is the disk use after the removals: what collecting records frees counts too */
    uint64_t before = total;
    collect_records(c);
    total = gpujit__dir_bytes(c->dir);
    if (max_bytes > 0 && total > max_bytes && n == all && (total = drop_notes(c, max_bytes, total)) < max_bytes)
      total = gpujit__dir_bytes(c->dir); /* directories shrink by blocks of their own */
    f += before > total ? before - total : 0;
  }
  if (removed)
    *removed = n;
  if (freed)
    *freed = f;
  if (left)
    *left = total;
  return 0;
}

int gpujit__cache_evict(gpujit_cache *c, uint64_t max_bytes, double older_than_s, uint64_t *removed,
                        uint64_t *freed, uint64_t *left)
{
  bool known;
  uint64_t total = 0, was;
  int fd = c->writable ? gpujit__cache_total_open(c, &was, &known) : -1, err;
  err = evict(c, max_bytes, older_than_s, removed, freed, &total);
  gpujit__cache_total_put(fd, total, err == 0);
  if (left)
    *left = total;
  return err;
}

void gpujit__cache_enforce_limit(gpujit_cache *c)
{
  uint64_t limit = 0, total;
  bool known;
  int fd;
  if (gpujit_cache_limit_get(c, &limit, NULL) < 0) {
    if (!c->warned) {
      gpujit__log(GPUJIT_LOG_WARN, "%s; no size limit applied", gpujit_error_last());
      c->warned = true;
    }
    gpujit_error_clear();
    limit = 0;
  }
  if (!c->writable || (fd = gpujit__cache_total_open(c, &total, &known)) < 0)
    return;
  /* Past the limit (or no total yet, with a limit): evict to 90 % of it, so the next stores do
   * not each list the cache. */
  if (limit && (!known || total > limit)) {
    uint64_t left = 0;
    if (evict(c, !known && total <= limit ? limit : limit - limit / 10, 0, NULL, NULL, &left) == 0) {
      total = left;
      known = true;
    } else {
      gpujit_error_clear();
    }
  }
  gpujit__cache_total_put(fd, total, known);
}
