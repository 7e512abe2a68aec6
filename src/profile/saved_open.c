/* gpujit_profile_open: a saved profile (profile/saved.h) read back as the run reported it — its
 * members checked against the manifest (name, size, XXH3-128) while they are unpacked into a
 * private directory, then read as any records directory is — or a records directory itself. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/error.h"
#include "base/fs.h"
#include "profile/model.h"
#include "profile/saved.h"
#include "profile/tar.h"

typedef struct reader {
  const char *path;
  int fd;
  uint64_t at; /* bytes read so far */
} reader;

/* Read `len` bytes, fewer only at the end of the file. @return the count, or -1 (errno). */
static ssize_t get(reader *r, void *buf, size_t len)
{
  size_t done = 0;
  while (done < len) {
    ssize_t n = read(r->fd, (char *)buf + done, len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    done += (size_t)n;
  }
  r->at += done;
  return (ssize_t)done;
}

static int corrupt(const reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int corrupt(const reader *r, const char *fmt, ...)
{
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  return gpujit__error(GPUJIT_ECORRUPT, "%s: %s", r->path, what);
}

static int unreadable(const reader *r) { return gpujit__error(GPUJIT_EIO, "%s: cannot read: %s", r->path, strerror(errno)); }

/* What a file that is no tar is, to say so: the JSON gpujit profile --json writes, a trace, ... */
static int foreign(const reader *r, const unsigned char *head, size_t n)
{
  const char *what = "not a gpujit saved profile (no tar header: write one with gpujit profile -o NAME -- COMMAND)";
  char text[GPUJIT__TAR_BLOCK + 1];
  size_t i = 0;
  memcpy(text, head, n);
  text[n] = '\0';
  bool is_text = true; /* JSON is text: no control characters but whitespace, no NUL */
  while (i < n && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
    i++;
  for (size_t k = 0; k < n; k++)
    if (head[k] < 0x20 && head[k] != '\n' && head[k] != '\t' && head[k] != '\r')
      is_text = false;
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
    what = "gzip-compressed: gunzip it first (gpujit reads a saved profile uncompressed)";
  else if (n >= 4 && !memcmp(head, "\x28\xb5\x2f\xfd", 4))
    what = "zstd-compressed: decompress it first (gpujit reads a saved profile uncompressed)";
  else if (!is_text)
    ; /* binary: no tar header is all that can be said */
  else if (i < n && text[i] == '{' && strstr(text + i, "\"gpujit-profile\""))
    what = "the JSON of gpujit profile --json, not a saved profile: it cannot be reported again (save one "
           "with gpujit profile -o NAME -- COMMAND)";
  else if (i < n && (text[i] == '{' || text[i] == '[') && strstr(text + i, "traceEvents"))
    what = "a trace (Trace Event Format), not a saved profile: open it in Perfetto, or read it with gpujit trace "
           "analyze";
  else if (i < n && (text[i] == '{' || text[i] == '['))
    what = "JSON, not a gpujit saved profile (write one with gpujit profile -o NAME -- COMMAND)";
  return gpujit__error(GPUJIT_ECORRUPT, "%s: %s", r->path, what);
}

static int check_manifest(const reader *r, const char *text, size_t len, cJSON **out);

/* The manifest: the first member, "format" and "version" checked. */
static int manifest(reader *r, cJSON **out)
{
  unsigned char head[GPUJIT__TAR_BLOCK];
  char name[101], *text;
  uint64_t size;
  size_t len;
  ssize_t got;
  int err;
  *out = NULL;
  if ((got = get(r, head, sizeof(head))) < 0)
    return unreadable(r);
  if (got == 0)
    return corrupt(r, "empty, not a gpujit saved profile");
  if ((size_t)got < sizeof(head))
    return foreign(r, head, (size_t)got);
  switch (gpujit__tar_parse(head, name, &size)) {
  case GPUJIT__TAR_NOT_TAR: return foreign(r, head, sizeof(head));
  case GPUJIT__TAR_END: return corrupt(r, "a tar archive with nothing in it, not a gpujit saved profile");
  case GPUJIT__TAR_CHECKSUM: return corrupt(r, "damaged: its first header does not match its checksum");
  default: break;
  }
  if (strcmp(name, GPUJIT__SAVED_MANIFEST) != 0)
    return corrupt(r, "a tar archive, not a gpujit saved profile (its first member is '%s', not %s)", name,
                   GPUJIT__SAVED_MANIFEST);
  if (size > GPUJIT__SAVED_MANIFEST_MAX)
    return corrupt(r, "damaged: its manifest claims %llu bytes", (unsigned long long)size);
  len = (size_t)size + gpujit__tar_pad(size);
  if (!(text = malloc(len + 1)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((got = get(r, text, len)) != (ssize_t)len) {
    free(text);
    if (got < 0)
      return unreadable(r);
    return corrupt(r, "truncated: the manifest ends after %llu of its %llu bytes",
                   (unsigned long long)((uint64_t)got < size ? (uint64_t)got : size), (unsigned long long)size);
  }
  err = check_manifest(r, text, (size_t)size, out);
  free(text);
  return err;
}

/* The manifest's text: a JSON object whose "format" and "version" this reader knows. */
static int check_manifest(const reader *r, const char *text, size_t len, cJSON **out)
{
  const cJSON *fmt, *ver;
  *out = cJSON_ParseWithLength(text, len);
  fmt = cJSON_GetObjectItemCaseSensitive(*out, "format");
  ver = cJSON_GetObjectItemCaseSensitive(*out, "version");
  if (!*out || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, GPUJIT__SAVED_FORMAT) || !cJSON_IsNumber(ver)) {
    cJSON_Delete(*out), *out = NULL;
    return corrupt(r, "damaged: its manifest (%s) is not a gpujit saved profile's", GPUJIT__SAVED_MANIFEST);
  }
  if (ver->valuedouble != GPUJIT_PROFILE_SAVED_VERSION) {
    double v = ver->valuedouble;
    cJSON_Delete(*out), *out = NULL;
    return gpujit__error(GPUJIT_EVERSION,
                         "%s: a saved profile of version %g; this gpujit reads version %d (report it with the gpujit "
                         "that wrote it, or a newer one)",
                         r->path, v, GPUJIT_PROFILE_SAVED_VERSION);
  }
  return 0;
}

/* The manifest's entry for `name`, or NULL. */
static const cJSON *listed(const cJSON *members, const char *name)
{
  const cJSON *m;
  cJSON_ArrayForEach(m, members)
  {
    const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
    if (n && !strcmp(n, name))
      return m;
  }
  return NULL;
}

/* One member's bytes into `dir`/`name`, hashed, and the padding after them. */
static int unpack(reader *r, const char *dir, const char *name, uint64_t size, const char *want)
{
  enum { CHUNK = 1 << 16 };
  char path[PATH_MAX], hash[33], *chunk = malloc(CHUNK);
  XXH3_state_t *st = XXH3_createState();
  XXH128_canonical_t c;
  uint64_t left = size;
  size_t pad = gpujit__tar_pad(size);
  ssize_t got;
  int fd = -1, err = 0;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (!chunk || !st)
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
  else if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
    err = gpujit__error(GPUJIT_EIO, "%s: cannot unpack %s: %s", r->path, path, strerror(errno));
  else
    XXH3_128bits_reset(st);
  while (!err && left > 0) {
    size_t n = left < CHUNK ? (size_t)left : CHUNK;
    if ((got = get(r, chunk, n)) != (ssize_t)n)
      err = got < 0 ? unreadable(r)
                    : corrupt(r, "truncated: member %s ends after %llu of its %llu bytes", name,
                              (unsigned long long)(size - left + (uint64_t)got), (unsigned long long)size);
    else if (gpujit__write_all(fd, chunk, n) != 0)
      err = gpujit__error(GPUJIT_EIO, "%s: cannot unpack %s: %s", r->path, path, strerror(errno));
    else
      XXH3_128bits_update(st, chunk, n), left -= n;
  }
  if (!err && pad && (got = get(r, chunk, pad)) != (ssize_t)pad)
    err = got < 0 ? unreadable(r) : corrupt(r, "truncated: the padding after member %s is cut", name);
  if (!err) {
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
    for (int i = 0; i < 16; i++)
      snprintf(hash + 2 * i, 3, "%02x", c.digest[i]);
    if (!want || strcmp(hash, want))
      err = corrupt(r, "damaged: member %s does not hold what was saved (its XXH3-128 differs)", name);
  }
  if (fd >= 0 && close(fd) != 0 && !err)
    err = gpujit__error(GPUJIT_EIO, "%s: cannot unpack %s: %s", r->path, path, strerror(errno));
  free(chunk);
  XXH3_freeState(st);
  return err;
}

/* Every member after the manifest, as the manifest lists them, then the end of the archive. */
static int members(reader *r, const cJSON *man, const char *dir)
{
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(man, "members");
  int want = cJSON_GetArraySize(list), seen = 0;
  if (!cJSON_IsArray(list))
    return corrupt(r, "damaged: its manifest lists no members");
  for (;;) {
    unsigned char head[GPUJIT__TAR_BLOCK];
    char name[101], path[PATH_MAX];
    uint64_t size;
    const cJSON *m, *bytes;
    ssize_t got = get(r, head, sizeof(head));
    int err;
    if (got < 0)
      return unreadable(r);
    if (got != (ssize_t)sizeof(head))
      return seen < want ? corrupt(r, "truncated: %d of its %d records files are there", seen, want)
                         : corrupt(r, "truncated: the end of the archive is missing");
    switch (gpujit__tar_parse(head, name, &size)) {
    case GPUJIT__TAR_END: /* and a second zero block: an archive cut inside its end is cut */
      if (seen < want)
        return corrupt(r, "damaged: %d of its %d records files are there", seen, want);
      if ((got = get(r, head, sizeof(head))) < 0)
        return unreadable(r);
      if (got != (ssize_t)sizeof(head) || gpujit__tar_parse(head, name, &size) != GPUJIT__TAR_END)
        return corrupt(r, "truncated: the end of the archive is cut");
      return 0;
    case GPUJIT__TAR_FILE: break;
    case GPUJIT__TAR_OTHER:
      return corrupt(r, "damaged: member '%s' is not a regular file of one path component",
                     gpujit__tar_name_ok(name) ? name : "(a name no saved profile has)");
    default:
      return corrupt(r, "damaged: the header at byte %llu is no member's (its magic or checksum is wrong)",
                     (unsigned long long)(r->at - GPUJIT__TAR_BLOCK));
    }
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!gpujit__tar_name_ok(name) || !strcmp(name, GPUJIT__SAVED_MANIFEST) || !(m = listed(list, name)))
      return corrupt(r, "damaged: member '%s' is not one its manifest lists",
                     gpujit__tar_name_ok(name) ? name : "(a name no saved profile has)");
    if (gpujit__exists(path))
      return corrupt(r, "damaged: member '%s' comes twice", name);
    bytes = cJSON_GetObjectItemCaseSensitive(m, "bytes");
    if (!cJSON_IsNumber(bytes) || bytes->valuedouble != (double)size)
      return corrupt(r, "damaged: member %s has %llu bytes, its manifest says %.0f", name, (unsigned long long)size,
                     cJSON_IsNumber(bytes) ? bytes->valuedouble : 0.0);
    if ((err = unpack(r, dir, name, size, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "xxh3")))) < 0)
      return err;
    seen++;
  }
}

static double num(const cJSON *j, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  return cJSON_IsNumber(v) ? v->valuedouble : cJSON_IsTrue(v) ? 1 : 0;
}

/* The run's facts from the manifest, then the records read as a run's are. */
static int build(gpujit_profile *p, const cJSON *man)
{
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(man, "options"), *range = cJSON_GetObjectItemCaseSensitive(man, "range");
  const cJSON *notes = cJSON_GetObjectItemCaseSensitive(man, "notes"), *line;
  const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(man, "command"));
  int err;
  if (!(p->command = gpujit__strdup(cmd ? cmd : "")))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  gpujit_profile_options_init(&p->opts, GPUJIT_PROFILE_OPTIONS_VERSION);
  p->opts.lineinfo = num(o, "lineinfo") != 0;
  p->opts.nvrtc_trace = num(o, "nvrtc_trace") != 0;
  p->opts.no_cupti = num(o, "no_cupti") != 0;
  p->opts.no_frameworks = num(o, "no_frameworks") != 0;
  p->opts.max_trace_events = (uint64_t)num(o, "max_trace_events");
  if (cJSON_IsObject(range)) {
    const char *t0 = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(range, "t0_ns"));
    const char *t1 = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(range, "t1_ns"));
    p->range = true;
    p->range_pid = (int)num(range, "pid");
    p->range_t0 = t0 ? strtoull(t0, NULL, 10) : 0;
    p->range_t1 = t1 ? strtoull(t1, NULL, 10) : 0;
  }
  cJSON_ArrayForEach(line, notes) /* the run's notes first; the reader's own come again, once */
    if (cJSON_IsString(line))
      gpujit__profile_note(p, "%s", line->valuestring);
  if ((err = gpujit__profile_read(p, p->dir)) < 0 || (err = gpujit__profile_attribute(p)) < 0 ||
      (err = gpujit__profile_views(p)) < 0)
    return err;
  /* NVRTC's phase files were beside the records and are unpacked beside them here: the trace
   * reads them from p->dir by name (profile/trace.c), never from the path a record gives */
  if (p->range) {
    p->totals.wall_ms = p->range_t1 > p->range_t0 ? (double)(p->range_t1 - p->range_t0) / 1e6 : 0;
    return 0;
  }
  p->totals.wall_ms = num(man, "wall_ms");
  p->totals.exit_status = (int)num(man, "exit_status");
  p->totals.signal = (int)num(man, "signal");
  if (p->totals.signal)
    p->totals.partial = 1;
  return 0;
}

static bool empty_dir(const char *path)
{
  DIR *d = opendir(path);
  struct dirent *e;
  bool empty = true;
  while (d && empty && (e = readdir(d)) != NULL)
    empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
  if (d)
    closedir(d);
  return empty;
}

/* A records directory. With its manifest (a --keep directory, an unpacked saved profile) it reports
 * as its run did; without, what the run knew beside its records is not there: its command is its
 * first process's, its wall time its records' span, and the report says its exit status is not. */
static int open_dir(gpujit_profile **out, const char *path)
{
  gpujit_profile *p;
  const pf_proc *first = NULL;
  char man_path[PATH_MAX];
  uint64_t end = 0;
  int err;
  snprintf(man_path, sizeof(man_path), "%s/%s", path, GPUJIT__SAVED_MANIFEST);
  if (gpujit__exists(man_path)) {
    reader r = {man_path, -1, 0};
    gpujit__buf b = {0};
    cJSON *man = NULL;
    if ((err = gpujit__file_read(&b, man_path)) < 0)
      return err;
    if ((err = check_manifest(&r, b.data, b.len, &man)) == 0) {
      if (!(p = calloc(1, sizeof(*p))) || !(p->dir = gpujit__strdup(path)))
        err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      else if ((err = build(p, man)) == 0)
        *out = p, p = NULL;
      gpujit_profile_free(p);
    }
    cJSON_Delete(man);
    gpujit__buf_free(&b);
    return err;
  }
  if ((err = gpujit_profile_load(out, path)) < 0)
    return err;
  p = *out;
  if (!p->procs.n && !*gpujit_profile_notes(p)) { /* an empty report would say "no JIT" of a run that never was */
    gpujit_profile_free(p), *out = NULL;
    return gpujit__error(GPUJIT_ECORRUPT, "%s: %s: nothing to report (a saved profile is the file 'gpujit profile -o' "
                                          "writes, or the records directory of --keep)",
                         path, empty_dir(path) ? "an empty directory" : "a directory holding no gpujit records");
  }
  for (size_t i = 0; i < p->procs.n; i++) {
    const pf_proc *c = &p->procs.v[i];
    end = c->t1 > end ? c->t1 : end;
    if (!c->adapter && c->cmd && (!first || c->t0 < first->t0))
      first = c;
  }
  if (first && !(p->command = gpujit__strdup(first->cmd))) {
    gpujit_profile_free(p), *out = NULL;
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  if (first && !p->totals.wall_ms && end > first->t0)
    p->totals.wall_ms = (double)(end - first->t0) / 1e6;
  if (p->procs.n)
    gpujit__profile_note(p, "%s holds records without their run's manifest: the command's exit status is not "
                            "known (shown as 0), its wall time is its records' span",
                         path);
  return 0;
}

int gpujit_profile_open(gpujit_profile **out, const char *path)
{
  reader r = {path, -1, 0};
  struct stat st;
  cJSON *man = NULL;
  gpujit_profile *p = NULL;
  const char *tmp = getenv("TMPDIR");
  char dir[PATH_MAX];
  int err;
  if (!out || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_open: NULL argument");
  *out = NULL;
  if (stat(path, &st) != 0)
    return gpujit__error(errno == ENOENT || errno == ENOTDIR ? GPUJIT_ENOENT : GPUJIT_EIO, "%s: %s", path,
                         errno == ENOENT || errno == ENOTDIR ? "no such saved profile" : strerror(errno));
  if (S_ISDIR(st.st_mode)) /* a records directory (--keep) */
    return open_dir(out, path);
  if (!S_ISREG(st.st_mode)) /* a FIFO or device would block or never end: not read */
    return gpujit__error(GPUJIT_EIO, "%s: not a regular file (a saved profile is one)", path);
  if ((r.fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
    return gpujit__error(GPUJIT_EIO, "%s: cannot read: %s", path, strerror(errno));
  if ((err = manifest(&r, &man)) < 0)
    goto done;
  snprintf(dir, sizeof(dir), "%s/gpujit-saved-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    err = gpujit__error(GPUJIT_EIO, "cannot make a directory to unpack %s in %s: %s", path,
                        tmp && *tmp ? tmp : "/tmp", strerror(errno));
    goto done;
  }
  if (!(p = calloc(1, sizeof(*p))) || !(p->dir = gpujit__strdup(dir))) {
    free(p), p = NULL;
    pf_remove_dir(dir);
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  p->own_dir = true; /* removed with the profile */
  if ((err = members(&r, man, dir)) < 0 || (err = build(p, man)) < 0)
    goto done;
  *out = p, p = NULL;
done:
  gpujit_profile_free(p);
  cJSON_Delete(man);
  close(r.fd);
  return err;
}
