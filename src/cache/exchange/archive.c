/* Export of cache entries as one archive (libarchive, loaded at run time): for CI artifacts and
 * caches; and one request's records packed in memory for a remote store. The way back in is
 * cache/exchange/import.c. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/output.h"
#include "cache/exchange/archive.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/exchange/libarchive.h"
#include "cache/records/manifests.h"

int gpujit_cache_export_options_init(gpujit_cache_export_options *o, unsigned int version)
{
  static const gpujit_cache_export_options init = GPUJIT_CACHE_EXPORT_OPTIONS_INIT;
  if (!o)
    return gpujit__error(GPUJIT_EINVAL, "options: NULL");
  if (version != GPUJIT_CACHE_EXPORT_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "export options version %u is not supported", version);
  *o = init;
  return 0;
}

/* ---- export ------------------------------------------------------------------------------- */

static int add_member(struct archive *a, const char *name, const void *data, size_t size, time_t mtime)
{
  struct archive_entry *e = archive_entry_new();
  int r;
  if (!e)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  archive_entry_set_pathname(e, name);
  archive_entry_set_size(e, (la_int64_t)size);
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_perm(e, 0600);
  archive_entry_set_mtime(e, mtime, 0);
  r = archive_write_header(a, e);
  if (r == ARCHIVE_OK && size && archive_write_data(a, data, size) != (la_ssize_t)size)
    r = ARCHIVE_FATAL;
  archive_entry_free(e);
  if (r != ARCHIVE_OK)
    return gpujit__error(GPUJIT_EIO, "writing %s into the archive: %s", name, archive_error_string(a));
  return 0;
}

static int add_file(struct archive *a, const char *root, const char *rel)
{
  char path[PATH_MAX];
  gpujit__buf b = {0};
  struct stat st;
  int err;
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  if (stat(path, &st) < 0)
    return gpujit__error(GPUJIT_EIO, "%s: %s", path, strerror(errno));
  if ((err = gpujit__file_read(&b, path)) == 0)
    err = add_member(a, rel, b.data ? b.data : "", b.len, st.st_mtime);
  gpujit__buf_free(&b);
  return err;
}

static int add_file_cb(const char *root, const char *rel, void *a) { return add_file(a, root, rel); }

static bool ends_with(const char *s, const char *suffix)
{
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool selected(const gpujit__entry *e, const gpujit_cache_export_options *o)
{
  if (o->used_since > 0 && (double)e->pub.last_used < o->used_since)
    return false;
  if (!o->keys_count)
    return true;
  for (size_t i = 0; i < o->keys_count; i++)
    if (o->keys[i] && strncmp(e->hex, o->keys[i], strlen(o->keys[i])) == 0)
      return true;
  return false;
}

static bool in_list(const gpujit__strvec *v, const char *s)
{
  for (size_t i = 0; i < v->count; i++)
    if (!strcmp(v->items[i], s))
      return true;
  return false;
}

/* Manifests that name an exported entry, and the groups they name. */
typedef struct manifest_pick {
  struct archive *a;
  gpujit_cache *c;
  const gpujit__strvec *entries;
  gpujit__strvec groups;
} manifest_pick;

static int pick_manifest(const char *path, const char *hex, void *payload)
{
  manifest_pick *m = payload;
  gpujit__strvec refs = {0}, gs = {0};
  bool wanted = false;
  int err = 0;
  (void)path;
  if (gpujit__manifest_refs(m->c, hex, &refs, &gs) == 0) {
    char rel[64];
    for (size_t i = 0; i < refs.count; i++)
      wanted |= in_list(m->entries, refs.items[i]);
    for (size_t i = 0; wanted && i < gs.count && err == 0; i++)
      if (!in_list(&m->groups, gs.items[i]))
        err = gpujit__strvec_push(&m->groups, gs.items[i]);
    snprintf(rel, sizeof(rel), "manifests/%.2s/%s", hex, hex + 2);
    if (wanted && err == 0)
      err = add_file(m->a, m->c->dir, rel);
  }
  gpujit_error_clear();
  gpujit__strvec_free(&refs);
  gpujit__strvec_free(&gs);
  return err;
}

static int add_manifests(struct archive *a, gpujit_cache *c, const gpujit__strvec *entries)
{
  manifest_pick m = {a, c, entries, {0}};
  int err = gpujit__each_record(c->dir, "manifests", pick_manifest, &m);
  for (size_t i = 0; i < m.groups.count && err == 0; i++) {
    char rel[64];
    snprintf(rel, sizeof(rel), "deps/%.2s/%s", m.groups.items[i], m.groups.items[i] + 2);
    err = add_file(a, c->dir, rel);
  }
  gpujit__strvec_free(&m.groups);
  return err;
}

int gpujit_cache_export(gpujit_cache *c, const char *path, const gpujit_cache_export_options *opts,
                        uint64_t *out_entries)
{
  gpujit_cache_export_options defaults = GPUJIT_CACHE_EXPORT_OPTIONS_INIT;
  gpujit__entry_list list = {0};
  gpujit__strvec chosen = {0};
  struct archive *a = NULL;
  gpujit__output out = {.fd = -1};
  char marker[256];
  int err, n;

  if (!c || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_export: NULL argument");
  if (!opts)
    opts = &defaults;
  if (opts->version != GPUJIT_CACHE_EXPORT_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "export options version %u is not supported", opts->version);
  { /* a name that promises another format gets none it does not promise */
    static const char *const other[] = {".zip", ".7z", ".rar", ".cpio", ".iso", ".ar"};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
      if (ends_with(path, other[i]))
        return gpujit__error(GPUJIT_EINVAL, "%s: gpujit exports tar archives (.tar, .tar.gz or .tgz, .tar.xz, .tar.zst), "
                                            "not %s: name the file for one of those", path, other[i] + 1);
  }
  if ((err = gpujit__archive_need()) < 0)
    return err;
  if ((err = gpujit__entries(&list, c->dir, true)) < 0)
    return err;
  if (!(a = archive_write_new()) || archive_write_set_format_pax_restricted(a) != ARCHIVE_OK) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  /* FILE.tar.zst, .tar.gz, .tgz, .tar.xz compress; anything else is a plain tar. */
  if ((ends_with(path, ".zst") && archive_write_add_filter_zstd(a) != ARCHIVE_OK) ||
      ((ends_with(path, ".gz") || ends_with(path, ".tgz")) && archive_write_add_filter_gzip(a) != ARCHIVE_OK) ||
      (ends_with(path, ".xz") && archive_write_add_filter_xz(a) != ARCHIVE_OK)) {
    err = gpujit__error(GPUJIT_EUNSUPPORTED, "%s: this libarchive cannot compress it: %s", path, archive_error_string(a));
    goto done;
  }
  if ((err = gpujit__output_open(&out, path)) < 0)
    goto done;
  if (archive_write_open_fd(a, out.fd) != ARCHIVE_OK) {
    err = gpujit__error(GPUJIT_EIO, "%s: %s", path, archive_error_string(a));
    goto done;
  }
  for (size_t i = 0; i < list.count && err == 0; i++)
    if (selected(&list.items[i], opts))
      err = gpujit__strvec_push(&chosen, list.items[i].hex);
  n = snprintf(marker, sizeof(marker), "{\"format\":\"gpujit-cache-export\",\"schema\":%d,\"created\":%lld,\"entries\":%zu}\n",
               GPUJIT_CACHE_SCHEMA, (long long)time(NULL), chosen.count);
  if (err == 0)
    err = add_member(a, GPUJIT__EXPORT_MARKER, marker, (size_t)n, time(NULL));
  for (size_t i = 0; i < chosen.count && err == 0; i++) {
    char rel[64];
    snprintf(rel, sizeof(rel), "entries/%.2s/%s", chosen.items[i], chosen.items[i] + 2);
    err = gpujit__walk_files(c->dir, rel, add_file_cb, a);
  }
  if (err == 0)
    err = add_manifests(a, c, &chosen);
  if (err == 0 && archive_write_close(a) != ARCHIVE_OK)
    err = gpujit__error(GPUJIT_EIO, "%s: %s", path, archive_error_string(a));
  if (err == 0)
    err = gpujit__output_commit(&out);
  if (err == 0 && out_entries)
    *out_entries = chosen.count;
done:
  if (a)
    archive_write_free(a);
  if (err < 0)
    gpujit__output_abort(&out);
  gpujit__entry_list_free(&list);
  gpujit__strvec_free(&chosen);
  return err;
}
