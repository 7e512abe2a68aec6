/* Export of cache entries as one archive (libarchive, loaded at run time): for CI artifacts and
 * caches; and one request's records packed in memory for a remote store. The way back in is
 * cache/import.c. */
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
#include "cache/archive.h"
#include "cache/files.h"
#include "cache/handle.h"
#include "cache/libarchive.h"
#include "cache/manifest.h"




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

/* Every file of an entry directory, by its path in the cache. */
static int add_tree(struct archive *a, const char *root, const char *rel)
{
  char path[PATH_MAX];
  struct dirent **names = NULL;
  int n, err = 0;
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  if ((n = scandir(path, &names, NULL, alphasort)) < 0)
    return gpujit__error(GPUJIT_EIO, "%s: %s", path, strerror(errno));
  for (int i = 0; i < n; i++) {
    char child[PATH_MAX], full[PATH_MAX + 8];
    struct stat st;
    if (err == 0 && strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
      snprintf(child, sizeof(child), "%s/%s", rel, names[i]->d_name);
      snprintf(full, sizeof(full), "%s/%s", root, child);
      if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode))
        err = add_tree(a, root, child);
      else if (S_ISREG(st.st_mode))
        err = add_file(a, root, child);
    }
    free(names[i]);
  }
  free(names);
  return err;
}

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
static int add_manifests(struct archive *a, gpujit_cache *c, const gpujit__strvec *entries)
{
  char dir[PATH_MAX];
  DIR *top;
  struct dirent *d;
  gpujit__strvec groups = {0};
  int err = 0;
  snprintf(dir, sizeof(dir), "%s/manifests", c->dir);
  if (!(top = opendir(dir)))
    return 0;
  while (err == 0 && (d = readdir(top))) {
    char sub[PATH_MAX];
    DIR *in;
    struct dirent *f;
    if (strlen(d->d_name) != 2)
      continue;
    snprintf(sub, sizeof(sub), "%s/%s", dir, d->d_name);
    if (!(in = opendir(sub)))
      continue;
    while (err == 0 && (f = readdir(in))) {
      char hex[40], rel[64];
      gpujit__strvec refs = {0}, gs = {0};
      bool wanted = false;
      if (strlen(f->d_name) != 30)
        continue;
      snprintf(hex, sizeof(hex), "%s%s", d->d_name, f->d_name);
      if (gpujit__manifest_refs(c, hex, &refs, &gs) == 0) {
        for (size_t i = 0; i < refs.count; i++)
          wanted |= in_list(entries, refs.items[i]);
        for (size_t i = 0; wanted && i < gs.count && err == 0; i++)
          if (!in_list(&groups, gs.items[i]))
            err = gpujit__strvec_push(&groups, gs.items[i]);
        if (wanted && err == 0) {
          snprintf(rel, sizeof(rel), "manifests/%s/%s", d->d_name, f->d_name);
          err = add_file(a, c->dir, rel);
        }
      }
      gpujit_error_clear();
      gpujit__strvec_free(&refs);
      gpujit__strvec_free(&gs);
    }
    closedir(in);
  }
  closedir(top);
  for (size_t i = 0; i < groups.count && err == 0; i++) {
    char rel[64];
    snprintf(rel, sizeof(rel), "deps/%.2s/%s", groups.items[i], groups.items[i] + 2);
    err = add_file(a, c->dir, rel);
  }
  gpujit__strvec_free(&groups);
  return err;
}

int gpujit_cache_export(gpujit_cache *c, const char *path, const gpujit_cache_export_options *opts,
                        uint64_t *out_entries)
{
  gpujit_cache_export_options defaults = GPUJIT_CACHE_EXPORT_OPTIONS_INIT;
  gpujit__entry_list list = {0};
  gpujit__strvec chosen = {0};
  struct archive *a = NULL;
  char tmp[PATH_MAX], marker[256];
  int err, n;

  if (!c || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_export: NULL argument");
  if (!opts)
    opts = &defaults;
  if (opts->version != GPUJIT_CACHE_EXPORT_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "export options version %u is not supported", opts->version);
  if ((err = gpujit__archive_need()) < 0)
    return err;
  if ((err = gpujit__entries(&list, c->dir, true)) < 0)
    return err;
  snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
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
  if (archive_write_open_filename(a, tmp) != ARCHIVE_OK) {
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
    err = add_tree(a, c->dir, rel);
  }
  if (err == 0)
    err = add_manifests(a, c, &chosen);
  if (err == 0 && archive_write_close(a) != ARCHIVE_OK)
    err = gpujit__error(GPUJIT_EIO, "%s: %s", path, archive_error_string(a));
  if (err == 0 && rename(tmp, path) < 0)
    err = gpujit__error(GPUJIT_EIO, "%s: %s", path, strerror(errno));
  if (err == 0 && out_entries)
    *out_entries = chosen.count;
done:
  if (a)
    archive_write_free(a);
  if (err < 0)
    unlink(tmp);
  gpujit__entry_list_free(&list);
  gpujit__strvec_free(&chosen);
  return err;
}
