/* The cache's size limit (cache/limit.h). The running total lives in `<cache>/size`, updated under
 * flock by every store, so a store knows it passed the limit without listing the cache; eviction
 * lists it (least recently used first: an entry directory's mtime is refreshed on every hit) and
 * resets the total to what it found. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/files.h"
#include "cache/handle.h"
#include "cache/limit.h"

#define SIZE_MAGIC 0x31657a69736a7067ULL /* "gpjsize1" */

typedef struct size_file {
  uint64_t magic;
  uint64_t bytes;
} size_file;

int gpujit_cache_parse_size(const char *s, uint64_t *out)
{
  char *end;
  double v;
  uint64_t unit = 1;
  if (!s || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_parse_size: NULL argument");
  if (!strcmp(s, "none") || !strcmp(s, "0")) {
    *out = 0;
    return 0;
  }
  errno = 0;
  v = strtod(s, &end);
  if (end == s || errno || v < 0)
    return gpujit__error(GPUJIT_EINVAL, "invalid size '%s': expected a number with K, M, G or T (e.g. 2G), or none", s);
  switch (toupper((unsigned char)*end)) {
  case '\0': break;
  case 'K': unit = 1ULL << 10; end++; break;
  case 'M': unit = 1ULL << 20; end++; break;
  case 'G': unit = 1ULL << 30; end++; break;
  case 'T': unit = 1ULL << 40; end++; break;
  default: end = (char *)"?";
  }
  if (*end == 'i' || *end == 'B')
    end += *end == 'i' && end[1] == 'B' ? 2 : 1;
  if (*end || v * (double)unit >= 1.8e19)
    return gpujit__error(GPUJIT_EINVAL, "invalid size '%s': expected a number with K, M, G or T (e.g. 2G), or none", s);
  *out = (uint64_t)(v * (double)unit);
  return 0;
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
    if ((err = gpujit_cache_parse_size(text.data, bytes)) < 0)
      err = gpujit__error(err, "%s: %s", p, gpujit_error_last());
  } else {
    gpujit_error_clear();
  }
  gpujit__buf_free(&text);
  return err;
}

int gpujit_cache_limit_set(gpujit_cache *c, uint64_t bytes)
{
  char p[PATH_MAX], text[32];
  int n, err;
  if (!c)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_limit_set: NULL cache");
  if (!c->writable)
    return gpujit__error(GPUJIT_EIO, "%s: the cache is read-only", c->dir);
  snprintf(p, sizeof(p), "%s/max_size", c->dir);
  if (bytes == 0) {
    if (unlink(p) < 0 && errno != ENOENT)
      return gpujit__error(GPUJIT_EIO, "%s: %s", p, strerror(errno));
    return 0;
  }
  n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)bytes);
  if ((err = gpujit__file_write_atomic(p, text, (size_t)n)) < 0)
    return err;
  return gpujit__cache_evict(c, bytes, 0, NULL, NULL, NULL);
}

/* The running total, opened and flock'ed; *known says whether the file held one. */
static int size_open(gpujit_cache *c, size_file *s, bool *known)
{
  char p[PATH_MAX];
  int fd;
  snprintf(p, sizeof(p), "%s/size", c->dir);
  *known = false;
  memset(s, 0, sizeof(*s));
  if ((fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
    return -1;
  if (flock(fd, LOCK_EX) < 0) {
    close(fd);
    return -1;
  }
  *known = pread(fd, s, sizeof(*s), 0) == (ssize_t)sizeof(*s) && s->magic == SIZE_MAGIC;
  s->magic = SIZE_MAGIC;
  return fd;
}

static void size_write(int fd, size_file *s)
{
  if (pwrite(fd, s, sizeof(*s), 0) != (ssize_t)sizeof(*s))
    gpujit__log(GPUJIT_LOG_DEBUG, "cache size total not updated: %s", strerror(errno));
}

/* Under the size file's lock (held by the caller through `fd`, or -1). */
static int evict(gpujit_cache *c, uint64_t max_bytes, double older_than_s, uint64_t *removed, uint64_t *freed,
                 uint64_t *left)
{
  gpujit__entry_list list = {0};
  char p[PATH_MAX];
  uint64_t total = 0, n = 0, f = 0;
  time_t now = time(NULL);
  int err;
  if ((err = gpujit__entries(&list, c->dir, true)) < 0) /* most recently used first */
    return err;
  for (size_t i = 0; i < list.count; i++)
    total += list.items[i].bytes;
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
      total -= e->bytes;
    } else {
      gpujit_error_clear(); /* in use, or gone already: passed over */
    }
  }
  gpujit__entry_list_free(&list);
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
  size_file s;
  bool known;
  uint64_t total = 0;
  int fd = c->writable ? size_open(c, &s, &known) : -1, err;
  err = evict(c, max_bytes, older_than_s, removed, freed, &total);
  if (fd >= 0) {
    if (err == 0) {
      s.bytes = total;
      size_write(fd, &s);
    }
    close(fd);
  }
  if (left)
    *left = total;
  return err;
}

void gpujit__cache_stored(gpujit_cache *c, uint64_t bytes)
{
  uint64_t limit = 0;
  size_file s;
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
  if ((fd = size_open(c, &s, &known)) < 0)
    return;
  if (known) {
    s.bytes += bytes;
    size_write(fd, &s);
  }
  /* Past the limit (or no total yet, with a limit): evict to 90 % of it, so the next stores do
   * not each list the cache. */
  if (limit && (!known || s.bytes > limit)) {
    uint64_t left = 0;
    if (evict(c, !known && s.bytes <= limit ? limit : limit - limit / 10, 0, NULL, NULL, &left) == 0) {
      s.bytes = left;
      size_write(fd, &s);
    } else {
      gpujit_error_clear();
    }
  }
  close(fd);
}
