/* Remote bundles (cache/bundle.h):
 *   "gpujit-bundle-1\n" { u32 name length, name, u64 size, bytes }* u64 XXH3-64 of all before it
 * Unpacked into a staging directory with the checks of an archive import (cache/import.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/archive.h"
#include "cache/bundle.h"
#include "cache/files.h"
#include "cache/handle.h"
#include "cache/manifest.h"

#define BUNDLE_MAGIC "gpujit-bundle-1\n"

static int add_record(gpujit__buf *out, const char *root, const char *rel)
{
  char path[PATH_MAX];
  gpujit__buf b = {0};
  uint32_t n = (uint32_t)strlen(rel);
  uint64_t size;
  int err;
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  if ((err = gpujit__file_read(&b, path)) < 0)
    return err;
  size = b.len;
  if ((err = gpujit__buf_put(out, &n, sizeof(n))) == 0 && (err = gpujit__buf_put(out, rel, n)) == 0 &&
      (err = gpujit__buf_put(out, &size, sizeof(size))) == 0)
    err = gpujit__buf_put(out, b.data ? b.data : "", b.len);
  gpujit__buf_free(&b);
  return err;
}

static int add_record_cb(const char *root, const char *rel, void *out) { return add_record(out, root, rel); }

int gpujit__bundle_pack(gpujit_cache *c, const char *request_hex, const char *entry_hex, gpujit__buf *out)
{
  gpujit__strvec entries = {0}, groups = {0};
  char rel[64];
  uint64_t sum;
  int err;
  out->len = 0;
  if ((err = gpujit__buf_put(out, BUNDLE_MAGIC, strlen(BUNDLE_MAGIC))) < 0)
    return err;
  snprintf(rel, sizeof(rel), "entries/%.2s/%s", entry_hex, entry_hex + 2);
  err = gpujit__walk_files(c->dir, rel, add_record_cb, out);
  if (err == 0 && (err = gpujit__manifest_refs(c, request_hex, &entries, &groups)) == 0) {
    snprintf(rel, sizeof(rel), "manifests/%.2s/%s", request_hex, request_hex + 2);
    err = add_record(out, c->dir, rel);
    for (size_t i = 0; i < groups.count && err == 0; i++) {
      snprintf(rel, sizeof(rel), "deps/%.2s/%s", groups.items[i], groups.items[i] + 2);
      err = add_record(out, c->dir, rel);
    }
  }
  if (err == 0) {
    sum = XXH3_64bits(out->data, out->len);
    err = gpujit__buf_put(out, &sum, sizeof(sum));
  }
  gpujit__strvec_free(&entries);
  gpujit__strvec_free(&groups);
  return err;
}

int gpujit__bundle_unpack(gpujit_cache *c, const void *data, size_t len, const char *name, uint64_t max_member_bytes,
                          gpujit_cache_import_result *out)
{
  const unsigned char *p = data, *end;
  size_t magic = strlen(BUNDLE_MAGIC);
  char stage[PATH_MAX];
  uint64_t sum;
  int err = 0;
  memset(out, 0, sizeof(*out));
  if (!max_member_bytes)
    max_member_bytes = (uint64_t)1 << 30;
  if (len < magic + sizeof(sum) || memcmp(p, BUNDLE_MAGIC, magic) != 0)
    return gpujit__error(GPUJIT_EPARSE, "%s: not a gpujit bundle", name);
  memcpy(&sum, p + len - sizeof(sum), sizeof(sum));
  if (XXH3_64bits(p, len - sizeof(sum)) != sum)
    return gpujit__error(GPUJIT_ECORRUPT, "%s: checksum mismatch (damaged or truncated)", name);
  end = p + len - sizeof(sum);
  p += magic;
  snprintf(stage, sizeof(stage), "%s/tmp/bundle.XXXXXX", c->dir);
  if (!mkdtemp(stage))
    return gpujit__error(GPUJIT_EIO, "%s: %s", stage, strerror(errno));
  while (err == 0 && p < end) {
    uint32_t n;
    uint64_t size;
    char rel[PATH_MAX], path[PATH_MAX * 2], *dir;
    const char *why;
    if ((size_t)(end - p) < sizeof(n) || (memcpy(&n, p, sizeof(n)), p += sizeof(n), n == 0) || n >= sizeof(rel) ||
        (size_t)(end - p) < n + sizeof(size)) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: a record runs past the end", name);
      break;
    }
    memcpy(rel, p, n);
    rel[n] = '\0';
    p += n;
    memcpy(&size, p, sizeof(size));
    p += sizeof(size);
    if (memchr(rel, '\0', n) || (why = gpujit__cache_member_problem(rel))) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: record %s is %s: refused", name, rel, memchr(rel, '\0', n) ? "malformed" : why);
      break;
    }
    if (size > max_member_bytes || size > (uint64_t)(end - p)) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: record %s of %llu bytes is too large: refused", name, rel,
                          (unsigned long long)size);
      break;
    }
    if (!strcmp(rel, "gpujit-export.json")) {
      p += size;
      continue;
    }
    snprintf(path, sizeof(path), "%s/%s", stage, rel);
    if ((dir = gpujit__dirname(path)) && (err = gpujit__mkdirs(dir, 0700)) == 0) {
      int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0 || (size && write(fd, p, size) != (ssize_t)size))
        err = gpujit__error(GPUJIT_EPARSE, "%s: record %s: %s", name, rel, fd < 0 ? strerror(errno) : "short write");
      if (fd >= 0)
        close(fd);
    }
    free(dir);
    p += size;
  }
  if (err == 0)
    err = gpujit__cache_import_staged(c, stage, out);
  gpujit__rmrf(stage);
  return err;
}
