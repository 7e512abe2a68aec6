/* The kernel cache's store: location, verified reads of opaque entries, per-key locks, atomic
 * publish, shared counters. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/lockfile.h"
#include "base/fs.h"
#include "cache/store/files.h"
#include "cache/store/store.h"
#include "cache/store/total.h"
#include "remote/remote.h"

int gpujit_cache_options_init(gpujit_cache_options *opts, unsigned int version)
{
  static const gpujit_cache_options init = GPUJIT_CACHE_OPTIONS_INIT;
  if (!opts)
    return gpujit__error(GPUJIT_EINVAL, "options: NULL");
  if (version != GPUJIT_CACHE_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "cache options version %u is not supported", version);
  *opts = init;
  return 0;
}

int gpujit_cache_default_dir(char **out, const char **origin)
{
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_default_dir: NULL out");
  if (!(*out = gpujit__cache_default_dir(origin)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  return 0;
}

/* Whether `path` is a directory itself, not a symbolic link to one: the cache writes nothing
 * through a link it did not make (an error says which, for the warning). */
static bool own_dir(const char *path)
{
  struct stat st;
  int r = lstat(path, &st);
  if (r == 0 && S_ISDIR(st.st_mode))
    return true;
  gpujit__error(GPUJIT_EIO, "%s is %s: nothing written through it", path,
                r == 0 && S_ISLNK(st.st_mode) ? "a symbolic link" : "no directory");
  return false;
}

/* Best effort: a directory we cannot create or write leaves the cache read-only. */
static bool prepare(gpujit_cache *c)
{
  char p[PATH_MAX];
  static const char *const subdirs[] = {"entries", "manifests", "deps", "tmp", "locks"};
  if (gpujit__mkdirs(c->dir, 0700) < 0)
    return false;
  for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
    snprintf(p, sizeof(p), "%s/%s", c->dir, subdirs[i]);
    if (mkdir(p, 0700) < 0 && errno != EEXIST)
      return false;
    if (!own_dir(p))
      return false;
  }
  snprintf(p, sizeof(p), "%s/VERSION", c->dir);
  if (access(p, F_OK) != 0) {
    static const char text[] = "gpujit-cache 1\n";
    if (gpujit__file_write_atomic(p, text, sizeof(text) - 1) < 0)
      return false;
  }
  snprintf(p, sizeof(p), "%s/tmp", c->dir);
  return access(p, W_OK) == 0;
}

static int open_cache(gpujit_cache **out, const gpujit_cache_options *opts, bool create)
{
  gpujit_cache_options defaults = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *c;
  const char *base;
  struct stat st;

  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_open: NULL out");
  *out = NULL;
  if (!opts)
    opts = &defaults;
  if (opts->version != GPUJIT_CACHE_OPTIONS_VERSION && opts->version != 1)
    return gpujit__error(GPUJIT_EVERSION, "cache options version %u is not supported", opts->version);
  if (!(c = calloc(1, sizeof(*c))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  c->dir = opts->dir ? gpujit__abspath(opts->dir) : gpujit__cache_default_dir(NULL);
  base = opts->base_dir ? opts->base_dir : getenv("GPUJIT_BASE_DIR");
  if (base && *base) {
    c->base = gpujit__abspath(base);
    if (c->base && strlen(c->base) > 1 && c->base[strlen(c->base) - 1] == '/')
      c->base[strlen(c->base) - 1] = '\0';
  }
  c->lock_timeout_s = opts->lock_timeout_s > 0 ? opts->lock_timeout_s : 600;
  if (!c->dir || (base && *base && !c->base)) {
    gpujit_cache_free(c);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  if (stat(c->dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
    int err = gpujit__error(GPUJIT_EINVAL, "cache directory '%s' is not a directory", c->dir);
    gpujit_cache_free(c);
    return err;
  }
  {
    const char *spec = opts->version >= 2 && opts->remote ? opts->remote : getenv("GPUJIT_REMOTE_CACHE");
    const char *ro_env = getenv("GPUJIT_REMOTE_READ_ONLY");
    bool ro = opts->version >= 2 && opts->remote_read_only >= 0 ? opts->remote_read_only != 0
                                                                  : (ro_env && *ro_env && strcmp(ro_env, "0") != 0);
    int err;
    if (spec && *spec && (err = gpujit__remote_open(&c->remote, spec, ro)) < 0) {
      gpujit_cache_free(c);
      return err;
    }
  }
  c->writable = create && prepare(c);
  if (!c->writable && create) {
    gpujit__log(GPUJIT_LOG_WARN, "cache %s is not writable: building without storing (%s)", c->dir,
                gpujit_error_last());
    c->warned = true;
  }
  gpujit_error_clear();
  *out = c;
  return 0;
}

int gpujit_cache_open(gpujit_cache **out, const gpujit_cache_options *opts)
{
  return open_cache(out, opts, true);
}

/* What a directory holds: -1 nothing (it is missing), 0 a gpujit cache or nothing yet, 1 anything
 * else. A cache says so in its VERSION file; one whose making was cut short before that file has
 * every directory a new cache starts with. A name alone (tmp/, notes/, entries/) is no proof:
 * many directories hold a tmp/, and a VERSION written there would make one a cache. A README
 * beside a cache changes nothing. */
static int holds(const char *dir)
{
  static const char *const layout[] = {"entries", "manifests", "deps", "tmp", "locks"};
  char p[PATH_MAX], head[16] = "";
  struct dirent *e;
  struct stat st;
  DIR *d;
  bool any = false, whole = true;
  FILE *f;
  if (!(d = opendir(dir)))
    return errno == ENOENT || errno == ENOTDIR ? -1 : 0;
  while (!any && (e = readdir(d)))
    any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  if (!any)
    return 0;
  snprintf(p, sizeof(p), "%s/VERSION", dir);
  if ((f = fopen(p, "re")) != NULL) {
    size_t n = fread(head, 1, 13, f);
    fclose(f);
    head[n] = '\0';
    return strcmp(head, "gpujit-cache ") != 0;
  }
  for (size_t i = 0; whole && i < sizeof(layout) / sizeof(layout[0]); i++) {
    snprintf(p, sizeof(p), "%s/%s", dir, layout[i]);
    whole = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
  }
  return !whole;
}

int gpujit_cache_open_existing(gpujit_cache **out, const gpujit_cache_options *opts)
{
  char *dir = opts && opts->dir ? gpujit__abspath(opts->dir) : gpujit__cache_default_dir(NULL);
  struct stat st;
  int what = 0, err = 0;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_open_existing: NULL out");
  *out = NULL;
  if (!dir)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
    err = gpujit__error(GPUJIT_EINVAL, "cache directory '%s' is not a directory", dir);
  else if ((what = holds(dir)) > 0)
    err = gpujit__error(GPUJIT_EINVAL, "%s holds files that are no gpujit cache's: left alone (a gpujit cache has a "
                        "VERSION file saying gpujit-cache)", dir);
  free(dir);
  if (err < 0)
    return err;
  return open_cache(out, opts, what == 0); /* a missing one: an empty cache to look at, made nowhere */
}

void gpujit_cache_free(gpujit_cache *c)
{
  if (c)
    gpujit__remote_free(c->remote);
  if (!c)
    return;
  free(c->dir);
  free(c->base);
  free(c);
}

const char *gpujit_cache_path(const gpujit_cache *c) { return c ? c->dir : NULL; }
int gpujit_cache_writable(const gpujit_cache *c) { return c && c->writable; }
const char *gpujit__cache_base(const gpujit_cache *c) { return c ? c->base : NULL; }

/* ---- shared counters ---------------------------------------------------------------------- */

#define STATS_MAGIC 0x31737473746a7067ULL /* "gpjtsts1" */

/* Read-modify-write under flock, so concurrent processes lose no counts. */
/* The counters' file as it is: the whole struct, or one written before `uncacheable` (zero). */
static bool stats_pread(int fd, gpujit__stats_file *s)
{
  ssize_t n;
  memset(s, 0, sizeof(*s));
  n = pread(fd, s, sizeof(*s), 0);
  if ((n != (ssize_t)sizeof(*s) && n != (ssize_t)GPUJIT__STATS_FILE_V1_SIZE) || s->magic != STATS_MAGIC) {
    memset(s, 0, sizeof(*s));
    return false;
  }
  return true;
}

static void stats_update(gpujit_cache *c, uint64_t hits, uint64_t misses, uint64_t stores, uint64_t corrupt,
                         double saved_ms, bool uncacheable)
{
  char p[PATH_MAX];
  gpujit__stats_file s = {0};
  int fd;
  if (!c->writable)
    return;
  snprintf(p, sizeof(p), "%s/stats", c->dir);
  if ((fd = gpujit__lockfile_open(p, O_RDWR | O_CREAT | O_NOFOLLOW, 0600)) < 0)
    return;
  if (gpujit__lockfile_lock(fd, LOCK_EX) == 0) {
    stats_pread(fd, &s);
    s.magic = STATS_MAGIC;
    if (uncacheable) { /* counted as a miss before the compile said so */
      s.misses -= s.misses > 0;
      s.uncacheable++;
    }
    s.hits += hits;
    s.misses += misses;
    s.stores += stores;
    s.corrupt += corrupt;
    s.saved_ms += saved_ms;
    if (pwrite(fd, &s, sizeof(s), 0) != (ssize_t)sizeof(s))
      gpujit__log(GPUJIT_LOG_DEBUG, "cache stats not updated: %s", strerror(errno));
  }
  gpujit__lockfile_close(fd);
}

void gpujit__cache_stats_update(gpujit_cache *c, uint64_t hits, uint64_t misses, uint64_t stores,
                         uint64_t corrupt, double saved_ms)
{
  stats_update(c, hits, misses, stores, corrupt, saved_ms, false);
}

void gpujit__cache_count_uncacheable(gpujit_cache *c) { stats_update(c, 0, 0, 0, 0, 0, true); }
void gpujit__cache_count_miss(gpujit_cache *c) { gpujit__cache_stats_update(c, 0, 1, 0, 0, 0); }
void gpujit__cache_count_hit(gpujit_cache *c, double saved_ms) { gpujit__cache_stats_update(c, 1, 0, 0, 0, saved_ms); }

void gpujit__cache_stats_read(gpujit_cache *c, gpujit__stats_file *s)
{
  char p[PATH_MAX];
  int fd;
  memset(s, 0, sizeof(*s));
  snprintf(p, sizeof(p), "%s/stats", c->dir);
  if ((fd = gpujit__lockfile_open(p, O_RDONLY, 0)) < 0)
    return;
  if (gpujit__lockfile_lock(fd, LOCK_SH) == 0)
    stats_pread(fd, s);
  gpujit__lockfile_close(fd);
}

/* ---- entries ------------------------------------------------------------------------------ */

int gpujit__cache_note_get(gpujit_cache *c, const char *kind, const char *hex, gpujit__buf *out)
{
  char path[PATH_MAX], why[128];
  gpujit__buf b = {0};
  size_t off = 0;
  int err;
  snprintf(path, sizeof(path), "%s/notes/%s/%s", c->dir, kind, hex);
  if ((err = gpujit__read_blob(&b, &off, path, "gpujit-note-1", why, sizeof(why))) < 0) {
    if (err == GPUJIT_ECORRUPT) {
      gpujit__log(GPUJIT_LOG_DEBUG, "cache note %s/%s damaged (%s): removed", kind, hex, why);
      unlink(path);
    }
    gpujit__buf_free(&b);
    gpujit_error_clear();
    return GPUJIT_ENOENT;
  }
  out->len = 0;
  err = gpujit__buf_put(out, b.data + off, b.len - off);
  gpujit__buf_free(&b);
  return err;
}

int gpujit__cache_note_put(gpujit_cache *c, const char *kind, const char *hex, const void *data, size_t len)
{
  char path[PATH_MAX];
  if (!c->writable)
    return 0;
  snprintf(path, sizeof(path), "%s/notes/%s/%s", c->dir, kind, hex);
  return gpujit__cache_write_record(c, path, "gpujit-note-1", data, len);
}

void gpujit__cache_damaged(gpujit_cache *c, const char *hex, const char *why)
{
  gpujit__log(GPUJIT_LOG_WARN, "cache entry %s is damaged (%s): rebuilding it", hex, why);
  gpujit__cache_stats_update(c, 0, 0, 0, 1, 0);
}

int gpujit__cache_get(gpujit_cache *c, const char *hex, cJSON **out_meta, gpujit__buf *image,
                      gpujit__cache_extra *extra)
{
  char path[PATH_MAX], why[256];
  gpujit__buf meta = {0};
  cJSON *j = NULL;
  int dfd, err = GPUJIT_ENOENT;

  *out_meta = NULL;
  gpujit__cache_entry_path(path, sizeof(path), c, hex);
  if ((dfd = gpujit__lockfile_open(path, O_RDONLY | O_DIRECTORY, 0)) < 0)
    return GPUJIT_ENOENT;
  gpujit__lockfile_lock(dfd, LOCK_SH); /* eviction passes over an entry being read (gpujit__remove_entry) */
  /* Both files are read through one directory handle: a concurrent replacement of the entry
   * cannot mix one version's metadata with another's image. */
  if (gpujit__read_meta(&meta, &j, dfd, why, sizeof(why)) < 0 ||
      gpujit__read_payload(image, dfd, cJSON_GetObjectItemCaseSensitive(j, "image"), why, sizeof(why)) < 0) {
    gpujit__cache_damaged(c, hex, why);
    cJSON_Delete(j);
    gpujit__buf_free(image);
    goto done;
  }
  if (extra) {
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(j, extra->role);
    extra->why[0] = '\0';
    if (desc && gpujit__read_payload(&extra->data, dfd, desc, why, sizeof(why)) < 0) {
      gpujit__buf_free(&extra->data);
      snprintf(extra->why, sizeof(extra->why), "cache entry %s: its %s is damaged (%s)", hex, extra->role, why);
    }
  }
  futimens(dfd, NULL); /* last used; best effort (a read-only cache keeps its times) */
  *out_meta = j;
  err = 0;
done:
  gpujit__lockfile_close(dfd);
  gpujit__buf_free(&meta);
  return err;
}

int gpujit__cache_lock(gpujit_cache *c, const char *hex, int *out_fd)
{
  char p[PATH_MAX];
  double start = gpujit__now_us();
  int fd;
  *out_fd = -1;
  if (!c->writable)
    return 0;
  snprintf(p, sizeof(p), "%s/locks/%s.lock", c->dir, hex);
  if ((fd = gpujit__lockfile_open(p, O_RDWR | O_CREAT | O_NOFOLLOW, 0600)) < 0)
    return 0; /* no lock: compile anyway, publish stays atomic */
  /* flock is dropped by the kernel when its holder dies: a crashed compiler never wedges us. */
  while (gpujit__lockfile_lock(fd, LOCK_EX | LOCK_NB) < 0) {
    struct timespec ts = {0, 5 * 1000 * 1000};
    if (errno != EWOULDBLOCK && errno != EINTR)
      break;
    if ((gpujit__now_us() - start) / 1e6 > c->lock_timeout_s) {
      gpujit__log(GPUJIT_LOG_WARN, "waited %.0f s for another process compiling %s; compiling anyway",
                  c->lock_timeout_s, hex);
      gpujit__lockfile_close(fd);
      return 0;
    }
    nanosleep(&ts, NULL);
  }
  *out_fd = fd;
  return 0;
}

void gpujit__cache_unlock(int fd)
{
  gpujit__lockfile_close(fd); /* the lock file stays, reused by the next compile */
}

int gpujit__cache_put_entry(gpujit_cache *c, const gpujit__cache_put *e)
{
  char tmp[PATH_MAX], final[PATH_MAX], parent[PATH_MAX];
  cJSON *meta = e->meta;
  uint64_t dirs_before = 0;
  int err = 0;

  if (!c->writable)
    return 0;
  snprintf(tmp, sizeof(tmp), "%s/tmp/%s.XXXXXX", c->dir, e->hex);
  if (!mkdtemp(tmp)) {
    err = gpujit__error(GPUJIT_EIO, "%s: %s", tmp, strerror(errno));
    tmp[0] = '\0';
    goto fail;
  }
  cJSON_AddNumberToObject(meta, "schema", GPUJIT_CACHE_SCHEMA);
  cJSON_AddStringToObject(meta, "key", e->hex);
  cJSON_AddNumberToObject(meta, "created", (double)time(NULL));
  if (c->base)
    cJSON_AddStringToObject(meta, "base_dir", c->base);
  else
    cJSON_AddNullToObject(meta, "base_dir");
  if ((err = gpujit__write_payload(tmp, e->image_name, e->image, e->image_size, meta, "image")) < 0)
    goto fail;
  if (e->extra_name && (err = gpujit__write_payload(tmp, e->extra_name, e->extra, e->extra_size, meta,
                                                     e->extra_role)) < 0)
    goto fail;
  /* The source dump: every file at its absolute path under src/. A name an import or a remote
   * bundle would refuse is refused here, before the entry is published: such an entry could hit
   * here and nowhere else. */
  for (size_t i = 0; i < e->sources_count; i++) {
    char rel[PATH_MAX];
    const char *why;
    if ((why = gpujit__cache_dump_problem(e->sources[i].path))) {
      err = gpujit__error(GPUJIT_EINVAL, "source dump: %s is %s", e->sources[i].path, why);
      goto fail;
    }
    snprintf(rel, sizeof(rel), "src%s", e->sources[i].path);
    if ((err = gpujit__write_payload(tmp, rel, e->sources[i].data, e->sources[i].size, meta, NULL)) < 0)
      goto fail;
  }
  if ((err = gpujit__write_meta(tmp, meta)) < 0)
    goto fail;
  gpujit__cache_entry_path(final, sizeof(final), c, e->hex);
  snprintf(parent, sizeof(parent), "%s/entries/%.2s", c->dir, e->hex);
  dirs_before = gpujit__cache_dirs_usage(parent);
  if (mkdir(parent, 0700) != 0 && errno != EEXIST) {
    err = gpujit__error(GPUJIT_EIO, "%s: %s", parent, strerror(errno));
    goto fail;
  }
  if (!own_dir(parent)) {
    err = GPUJIT_EIO;
    goto fail;
  }
  if ((err = gpujit__publish_dir(c->dir, tmp, final)) < 0)
    goto fail;
  gpujit__cache_stats_update(c, 0, 0, 1, 0, 0);
  gpujit__cache_total_add(c, (int64_t)(gpujit__dir_bytes(final) + gpujit__cache_dirs_usage(parent)) -
                                 (int64_t)dirs_before);
  return 0;
fail:
  if (tmp[0] && gpujit__is_dir(tmp))
    gpujit__rmrf(tmp);
  if (!c->warned) {
    gpujit__log(GPUJIT_LOG_WARN, "cache store failed, continuing uncached: %s", gpujit_error_last());
    c->warned = true;
  }
  return err;
}
