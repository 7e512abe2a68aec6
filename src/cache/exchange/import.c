/* Import of cache archives: every member's name, type and size checked before anything is
 * written, every entry, manifest and group verified in a staging directory, a good local entry
 * never replaced (cache/exchange/archive.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/exchange/archive.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/exchange/libarchive.h"
#include "cache/upkeep/limit.h"
#include "cache/records/groups.h"
#include "cache/records/manifests.h"

/* ---- import ------------------------------------------------------------------------------- */

static bool hex_run(const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

/* Only names of the cache's own layout; no absolute path, no "." or ".." component. */
const char *gpujit__cache_member_problem(const char *name)
{
  const char *why;
  size_t len = strlen(name);
  if (!len)
    return "an empty name";
  if (name[0] == '/')
    return "an absolute path";
  if ((why = gpujit__path_components_problem(name)))
    return why;
  if (!strcmp(name, GPUJIT__EXPORT_MARKER))
    return NULL;
  if ((!strncmp(name, "manifests/", 10) || !strncmp(name, "deps/", 5))) {
    const char *h = name + (name[0] == 'm' ? 10 : 5);
    if (strlen(h) == 33 && hex_run(h, 2) && h[2] == '/' && hex_run(h + 3, 30))
      return NULL;
    return "not a record of gpujit's cache";
  }
  if (!strncmp(name, "entries/", 8) && strlen(name) > 8 + 33 && hex_run(name + 8, 2) && name[10] == '/' &&
      hex_run(name + 11, 30) && name[41] == '/') {
    /* src/<absolute path>; "src" joined to a relative one ("srcinc/h.h") is what earlier builds
     * wrote for a header found through a relative -I: malformed, but inside its entry all the same */
    const char *f = name + 42;
    if (!strcmp(f, "meta.json") || !strcmp(f, "meta.xxh3") || !strcmp(f, "image.cubin") || !strcmp(f, "image.ptx") ||
        !strcmp(f, "image.ltoir") || !strcmp(f, "profile.json") || (!strncmp(f, "src", 3) && f[3]))
      return NULL;
  }
  return "not a file of gpujit's cache";
}

static const char *type_name(mode_t type)
{
  switch (type) {
  case AE_IFLNK: return "a symbolic link";
  case AE_IFCHR: return "a character device";
  case AE_IFBLK: return "a block device";
  case AE_IFIFO: return "a FIFO";
  case AE_IFSOCK: return "a socket";
  case AE_IFDIR: return "a directory";
  default: return "not a regular file";
  }
}

/* What one import stages at most without a cache limit: 16 GiB, and no more than IMPORT_RATIO
 * times the archive's own size past IMPORT_FLOOR — a cache export compresses a few times, not
 * thousands (a 125 KiB archive once staged 3.5 GiB before it failed). */
#define IMPORT_CAP ((uint64_t)16 << 30)
#define IMPORT_FLOOR ((uint64_t)256 << 20)
#define IMPORT_RATIO 1000

/* What staging `packed` bytes of archive (0: not known) may expand to, and why in `why`. */
static uint64_t import_bound(uint64_t packed, char *why, size_t n)
{
  uint64_t bound = packed && packed < IMPORT_CAP / IMPORT_RATIO ? packed * IMPORT_RATIO : IMPORT_CAP;
  if (bound < IMPORT_FLOOR)
    bound = IMPORT_FLOOR;
  if (bound >= IMPORT_CAP) {
    snprintf(why, n, "gpujit's cap for one import");
    return IMPORT_CAP;
  }
  snprintf(why, n, "%d times the archive's %llu bytes, or %llu MiB: gpujit's bound on how far an archive expands",
           IMPORT_RATIO, (unsigned long long)packed, (unsigned long long)(IMPORT_FLOOR >> 20));
  return bound;
}

/* Every member checked and written under `stage`; nothing outside it, and no more than
 * `max_total` bytes in all (a small compressed archive can expand to gigabytes). */
static int extract(struct archive *a, const char *path, const char *stage, uint64_t max_member, uint64_t max_total,
                   const char *bound_why, bool *marker)
{
  struct archive_entry *e;
  uint64_t staged = 0;
  char *buf = malloc(1 << 16);
  int r, err = 0;
  if (!buf)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  while (err == 0 && (r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
    const char *name = archive_entry_pathname(e), *why;
    char out[PATH_MAX], *dir;
    la_int64_t size = archive_entry_size(e), got = 0;
    int fd;
    if (!name)
      name = "";
    while (name[0] == '.' && name[1] == '/') /* tar -C DIR . names members ./x */
      name += 2;
    if ((!strcmp(name, ".") || !name[0]) && archive_entry_filetype(e) == AE_IFDIR)
      continue;
    if (archive_entry_filetype(e) == AE_IFDIR) { /* nothing is made from them; their names must be sane */
      char d[PATH_MAX];
      size_t len = strlen(name);
      while (len && name[len - 1] == '/')
        len--;
      snprintf(d, sizeof(d), "%.*s", (int)len, name);
      why = gpujit__cache_member_problem(d);
      if (d[0] == '/' || (why && strstr(why, "leaves")))
        err = gpujit__error(GPUJIT_EPARSE, "%s: member %s is %s: refused", path, name, why ? why : "an absolute path");
      if (err < 0)
        break;
      continue;
    }
    if (archive_entry_hardlink(e))
      err = gpujit__error(GPUJIT_EPARSE, "%s: member %s is a hard link: refused", path, name);
    else if (archive_entry_filetype(e) != AE_IFREG)
      err = gpujit__error(GPUJIT_EPARSE, "%s: member %s is %s: refused", path, name, type_name(archive_entry_filetype(e)));
    else if ((why = gpujit__cache_member_problem(name)))
      err = gpujit__error(GPUJIT_EPARSE, "%s: member %s is %s: refused", path, name, why);
    else if (size < 0 || (uint64_t)size > max_member)
      err = gpujit__error(GPUJIT_EPARSE, "%s: member %s is %lld bytes, over the %llu-byte limit: refused", path, name,
                          (long long)size, (unsigned long long)max_member);
    else if ((staged += (uint64_t)size) > max_total) /* checked before a byte of it is written */
      err = gpujit__error(GPUJIT_EPARSE, "%s: its members hold more than %llu bytes in all (%s): refused before "
                                          "staging more",
                          path, (unsigned long long)max_total,
                          bound_why);
    if (err < 0)
      break;
    *marker |= !strcmp(name, GPUJIT__EXPORT_MARKER);
    snprintf(out, sizeof(out), "%s/%s", stage, name);
    if ((dir = gpujit__dirname(out)) && (err = gpujit__mkdirs(dir, 0700)) < 0) {
      free(dir);
      break;
    }
    free(dir);
    if ((err = gpujit__fsize_check(out, (uint64_t)size)) < 0) /* ulimit -f: an error, not SIGXFSZ */
      break;
    if ((fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: member %s: %s (twice in the archive?)", path, name, strerror(errno));
      break;
    }
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf, 1 << 16);
      if (n == 0)
        break;
      if (n < 0 || (got += n) > size || write(fd, buf, (size_t)n) != n) {
        err = gpujit__error(GPUJIT_EPARSE, "%s: member %s: %s", path, name,
                            n < 0 ? archive_error_string(a) : got > size ? "longer than its header says" : strerror(errno));
        break;
      }
    }
    close(fd);
  }
  if (err == 0 && r != ARCHIVE_EOF && r != ARCHIVE_OK)
    err = gpujit__error(GPUJIT_EPARSE, "%s: %s", path, archive_error_string(a));
  free(buf);
  return err;
}

typedef struct import_ctx {
  gpujit_cache *c;
  gpujit_cache_import_result *res;
} import_ctx;

static int import_entry(const char *staged, const char *hex, void *payload)
{
  gpujit_cache *c = ((import_ctx *)payload)->c;
  gpujit_cache_import_result *res = ((import_ctx *)payload)->res;
  char final[PATH_MAX], why[256], parent[PATH_MAX];
  gpujit__buf meta = {0};
  cJSON *j = NULL;
  int dfd = open(staged, O_RDONLY | O_DIRECTORY | O_CLOEXEC), bad = dfd < 0;
  if (!bad && gpujit__read_meta(&meta, &j, dfd, why, sizeof(why)) < 0)
    bad = 1;
  else if (!bad && (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "key")) ||
                    strcmp(cJSON_GetObjectItemCaseSensitive(j, "key")->valuestring, hex) != 0))
    bad = 1, snprintf(why, sizeof(why), "its metadata names another key");
  if (dfd >= 0)
    close(dfd);
  cJSON_Delete(j);
  gpujit__buf_free(&meta);
  if (!bad && gpujit__verify_entry(staged, why, sizeof(why)) < 0)
    bad = 1;
  if (bad) {
    gpujit__log(GPUJIT_LOG_WARN, "import: entry %s refused: %s", hex, dfd < 0 ? "unreadable" : why);
    res->rejected++;
    return 0;
  }
  gpujit__cache_entry_path(final, sizeof(final), c, hex);
  if (gpujit__is_dir(final) && gpujit__verify_entry(final, why, sizeof(why)) == 0) {
    res->present++; /* a good local entry stays */
    return 0;
  }
  snprintf(parent, sizeof(parent), "%s/entries/%.2s", c->dir, hex);
  if (mkdir(parent, 0700) < 0 && errno != EEXIST)
    return gpujit__error(GPUJIT_EIO, "%s: %s", parent, strerror(errno));
  if (gpujit__publish_dir(c->dir, staged, final) < 0)
    return GPUJIT_EIO;
  res->entries++;
  return 0;
}

static int import_manifest(const char *staged, const char *hex, void *payload)
{
  gpujit_cache *c = ((import_ctx *)payload)->c;
  gpujit_cache_import_result *res = ((import_ctx *)payload)->res;
  char why[128];
  cJSON *j = NULL;
  int err = 0;
  if (gpujit__manifest_read(staged, &j, why, sizeof(why)) < 0) {
    gpujit__log(GPUJIT_LOG_WARN, "import: manifest %s refused: %s", hex, why);
    gpujit_error_clear();
    res->rejected++;
    return 0;
  }
  if ((err = gpujit__manifest_merge(c, hex, j)) == 0)
    res->manifests++;
  cJSON_Delete(j);
  return err;
}

static int import_group(const char *staged, const char *hex, void *payload)
{
  gpujit_cache *c = ((import_ctx *)payload)->c;
  gpujit_cache_import_result *res = ((import_ctx *)payload)->res;
  char why[128];
  gpujit__deps group;
  int err = gpujit__group_read(staged, &group, why, sizeof(why));
  if (err == 0) {
    err = gpujit__group_import(c, hex, &group, why, sizeof(why));
    gpujit__deps_free(&group);
  }
  if (err == GPUJIT_ECORRUPT || err == GPUJIT_ENOENT) {
    gpujit__log(GPUJIT_LOG_WARN, "import: dependency group %s refused: %s", hex, why);
    gpujit_error_clear();
    res->rejected++;
    return 0;
  }
  return err;
}

/* Read `a` (opened by the caller, named `name` in messages) into the cache. */
static int import_archive(gpujit_cache *c, struct archive *a, const char *name, uint64_t packed,
                          uint64_t max_member_bytes, gpujit_cache_import_result *res)
{
  char stage[PATH_MAX];
  bool marker = false;
  int err;
  snprintf(stage, sizeof(stage), "%s/tmp/import.XXXXXX", c->dir);
  if (!mkdtemp(stage))
    return gpujit__error(GPUJIT_EIO, "%s: %s", stage, strerror(errno));
  {
    char why[160];
    uint64_t limit = 0, total = import_bound(packed, why, sizeof(why));
    if (gpujit_cache_limit_get(c, &limit, NULL) == 0 && limit && limit < total) {
      total = limit; /* more than the cache may hold would be evicted at once */
      snprintf(why, sizeof(why), "the cache's size limit");
    }
    gpujit_error_clear();
    err = extract(a, name, stage, max_member_bytes ? max_member_bytes : (uint64_t)1 << 30, total, why, &marker);
  }
  if (err == 0 && !marker)
    err = gpujit__error(GPUJIT_EPARSE, "%s: not a gpujit cache export (no %s)", name, GPUJIT__EXPORT_MARKER);
  if (err == 0)
    err = gpujit__cache_import_staged(c, stage, res);
  gpujit__rmrf(stage);
  return err;
}

int gpujit__cache_import_staged(gpujit_cache *c, const char *stage, gpujit_cache_import_result *res)
{
  int err;
  /* Entries before manifests: a manifest then names entries that are there. */
  import_ctx ctx = {c, res};
  if ((err = gpujit__each_record(stage, "entries", import_entry, &ctx)) == 0 &&
      (err = gpujit__each_record(stage, "deps", import_group, &ctx)) == 0)
    err = gpujit__each_record(stage, "manifests", import_manifest, &ctx);
  return err;
}

int gpujit_cache_import(gpujit_cache *c, const char *path, uint64_t max_member_bytes, gpujit_cache_import_result *out)
{
  gpujit_cache_import_result res = {0};
  struct archive *a;
  struct stat st;
  int err = 0;

  if (!c || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_import: NULL argument");
  if (!c->writable)
    return gpujit__error(GPUJIT_EIO, "%s: the cache is read-only", c->dir);
  if (access(path, R_OK) < 0)
    return gpujit__error(errno == ENOENT ? GPUJIT_ENOENT : GPUJIT_EIO, "%s: %s", path, strerror(errno));
  if ((err = gpujit__archive_need()) < 0)
    return err;
  if (!(a = archive_read_new()))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK)
    err = gpujit__error(GPUJIT_EPARSE, "%s: not an archive gpujit reads: %s", path, archive_error_string(a));
  else
    err = import_archive(c, a, path, stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0,
                         max_member_bytes, &res);
  archive_read_free(a);
  if (err == 0) /* what came in counts against the limit like a build's store */
    gpujit__cache_enforce_limit(c);
  if (out)
    *out = res;
  return err;
}
