/* gpujit_profile_save: a profile's records directory and what the run knew beside it (its command,
 * outcome, options and notes) packed into one file a later `gpujit profile report` reads
 * (profile/saved.h says the format). */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/output.h"
#include "profile/json.h"
#include "profile/model.h"
#include "profile/saved.h"
#include "profile/tar.h"

typedef struct member {
  char name[100];
  uint64_t bytes;
  int64_t mtime;
  char hash[33];
} member;

static int by_name(const void *a, const void *b) { return strcmp(((const member *)a)->name, ((const member *)b)->name); }

/* Open a records file for reading: a regular file, never a link put in the directory. */
static int open_member(const char *dir, const char *name, struct stat *st)
{
  char path[PATH_MAX];
  int fd;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
    return gpujit__error(GPUJIT_EIO, "%s: cannot read: %s", path, strerror(errno));
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    close(fd);
    return gpujit__error(GPUJIT_EIO, "%s: not a regular file", path);
  }
  return fd;
}

/* Copy (with `out`) or only hash (`out` < 0) a member's bytes; `m->bytes` is set when hashing,
 * checked when copying (a records file that changed between the two is an error). */
static int pass(const char *dir, member *m, int out)
{
  enum { CHUNK = 1 << 16 };
  char *chunk = malloc(CHUNK);
  XXH3_state_t *st = XXH3_createState();
  XXH128_canonical_t c;
  struct stat sb;
  uint64_t done = 0;
  ssize_t n;
  int fd, err = 0;
  if (!st || !chunk) {
    XXH3_freeState(st), free(chunk);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  if ((fd = open_member(dir, m->name, &sb)) < 0) {
    XXH3_freeState(st), free(chunk);
    return fd;
  }
  XXH3_128bits_reset(st);
  while ((n = read(fd, chunk, CHUNK)) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      err = gpujit__error(GPUJIT_EIO, "%s/%s: cannot read: %s", dir, m->name, strerror(errno));
      break;
    }
    if (out >= 0 && (done + (uint64_t)n > m->bytes || gpujit__write_all(out, chunk, (size_t)n) != 0)) {
      err = done + (uint64_t)n > m->bytes ? gpujit__error(GPUJIT_EIO, "%s/%s: changed while it was saved", dir, m->name)
                                          : gpujit__error(GPUJIT_EIO, "cannot write: %s", strerror(errno));
      break;
    }
    XXH3_128bits_update(st, chunk, (size_t)n);
    done += (uint64_t)n;
  }
  close(fd);
  if (!err && out < 0) {
    m->bytes = done;
    m->mtime = (int64_t)sb.st_mtime;
    if (done > GPUJIT__TAR_MAX_SIZE)
      err = gpujit__error(GPUJIT_EIO, "%s/%s: %" PRIu64 " bytes, more than a saved profile's member holds", dir,
                          m->name, done);
  }
  if (!err && out >= 0 && done != m->bytes)
    err = gpujit__error(GPUJIT_EIO, "%s/%s: changed while it was saved", dir, m->name);
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
  for (int i = 0; i < 16 && out < 0; i++)
    snprintf(m->hash + 2 * i, 3, "%02x", c.digest[i]);
  XXH3_freeState(st), free(chunk);
  return err;
}

/* The records directory's regular files with names a member may have, sorted. */
static int list(const char *dir, member **out, size_t *n)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  size_t cap = 0;
  *out = NULL, *n = 0;
  if (!d)
    return gpujit__error(GPUJIT_EIO, "%s: cannot read the records: %s", dir, strerror(errno));
  while ((e = readdir(d)) != NULL) {
    struct stat st;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    if (!gpujit__tar_name_ok(e->d_name) || !strcmp(e->d_name, GPUJIT__SAVED_MANIFEST) || lstat(path, &st) != 0 ||
        !S_ISREG(st.st_mode))
      continue; /* not a record: ".", "..", a link or a directory someone put in a --keep directory */
    if (*n == cap) {
      member *g = realloc(*out, (cap = cap ? 2 * cap : 16) * sizeof(**out));
      if (!g) {
        closedir(d);
        return gpujit__error(GPUJIT_ENOMEM, "out of memory");
      }
      *out = g;
    }
    memset(&(*out)[*n], 0, sizeof(**out));
    snprintf((*out)[(*n)++].name, sizeof((*out)[0].name), "%s", e->d_name);
  }
  closedir(d);
  if (*n)
    qsort(*out, *n, sizeof(**out), by_name);
  return 0;
}

/* The manifest; `m` NULL (and `listed` false): a records directory's, with no member list. */
static char *manifest(const gpujit_profile *p, const member *m, size_t n, bool listed)
{
  cJSON *j = cJSON_CreateObject(), *o, *a;
  char text[32], *s;
  cJSON_AddStringToObject(j, "format", GPUJIT__SAVED_FORMAT);
  cJSON_AddNumberToObject(j, "version", GPUJIT_PROFILE_SAVED_VERSION);
  cJSON_AddStringToObject(j, "producer", "gpujit " GPUJIT_VERSION_STRING);
  cJSON_AddStringToObject(j, "command", gpujit_profile_command(p));
  cJSON_AddStringToObject(j, "records_dir", p->dir ? p->dir : "");
  cJSON_AddNumberToObject(j, "exit_status", p->totals.exit_status);
  cJSON_AddNumberToObject(j, "signal", p->totals.signal);
  cJSON_AddNumberToObject(j, "wall_ms", p->totals.wall_ms);
  o = cJSON_AddObjectToObject(j, "options");
  cJSON_AddBoolToObject(o, "lineinfo", p->opts.lineinfo);
  cJSON_AddBoolToObject(o, "nvrtc_trace", p->opts.nvrtc_trace);
  cJSON_AddBoolToObject(o, "no_cupti", p->opts.no_cupti);
  cJSON_AddBoolToObject(o, "no_frameworks", p->opts.no_frameworks);
  cJSON_AddNumberToObject(o, "max_trace_events", (double)p->opts.max_trace_events);
  if (p->range) {
    o = cJSON_AddObjectToObject(j, "range");
    cJSON_AddNumberToObject(o, "pid", p->range_pid);
    snprintf(text, sizeof(text), "%" PRIu64, p->range_t0);
    cJSON_AddStringToObject(o, "t0_ns", text);
    snprintf(text, sizeof(text), "%" PRIu64, p->range_t1);
    cJSON_AddStringToObject(o, "t1_ns", text);
  }
  cJSON_AddItemToObject(j, "notes", gpujit__profile_notes_json(p));
  a = listed ? cJSON_AddArrayToObject(j, "members") : NULL;
  for (size_t i = 0; a && i < n; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", m[i].name);
    cJSON_AddNumberToObject(e, "bytes", (double)m[i].bytes);
    cJSON_AddStringToObject(e, "xxh3", m[i].hash);
    cJSON_AddItemToArray(a, e);
  }
  s = cJSON_Print(j);
  cJSON_Delete(j);
  return s;
}

static int block_out(gpujit__output *o, const void *data, size_t len)
{
  return gpujit__write_all(o->fd, data, len) == 0
             ? 0
             : gpujit__error(GPUJIT_EIO, "%s: cannot write: %s", o->path, strerror(errno));
}

int gpujit_profile_save(const gpujit_profile *p, const char *path)
{
  static const unsigned char zeros[2 * GPUJIT__TAR_BLOCK];
  unsigned char head[GPUJIT__TAR_BLOCK];
  gpujit__output o;
  member *m = NULL;
  size_t n = 0;
  char *man = NULL;
  int err;
  if (!p || !path || !*path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_save: NULL argument");
  if (!p->dir)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_save: the profile has no records");
  if ((err = list(p->dir, &m, &n)) < 0)
    return err;
  for (size_t i = 0; i < n; i++)
    if ((err = pass(p->dir, &m[i], -1)) < 0)
      goto done;
  if (!(man = manifest(p, m, n, true))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  if ((err = gpujit__output_open(&o, path)) < 0)
    goto done;
  gpujit__tar_header(head, GPUJIT__SAVED_MANIFEST, strlen(man), (int64_t)time(NULL));
  if ((err = block_out(&o, head, sizeof(head))) < 0 || (err = block_out(&o, man, strlen(man))) < 0 ||
      (err = block_out(&o, zeros, gpujit__tar_pad(strlen(man)))) < 0)
    goto abort;
  for (size_t i = 0; i < n; i++) {
    gpujit__tar_header(head, m[i].name, m[i].bytes, m[i].mtime);
    if ((err = block_out(&o, head, sizeof(head))) < 0 || (err = pass(p->dir, &m[i], o.fd)) < 0 ||
        (err = block_out(&o, zeros, gpujit__tar_pad(m[i].bytes))) < 0)
      goto abort;
  }
  if ((err = block_out(&o, zeros, sizeof(zeros))) < 0)
    goto abort;
  err = gpujit__output_commit(&o);
  goto done;
abort:
  gpujit__output_abort(&o);
done:
  free(man);
  free(m);
  return err;
}

int gpujit__profile_save_manifest(const gpujit_profile *p, const char *dir)
{
  char path[PATH_MAX], *man;
  int err;
  if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, GPUJIT__SAVED_MANIFEST) >= sizeof(path))
    return gpujit__error(GPUJIT_EINVAL, "%s: path too long", dir);
  if (!(man = manifest(p, NULL, 0, false)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  err = gpujit__file_write_atomic_ex(path, man, strlen(man), false);
  free(man);
  return err;
}
