/* The cache's disk use (cache/store/total.h): a size limit counts what the cache occupies on disk, as
 * ccache does — every file in whole allocated blocks, directories too, records as well as
 * entries — since that is what a user reads a limit as. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/lockfile.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/store/total.h"

#define SIZE_MAGIC 0x32657a69736a7067ULL /* "gpjsize2": disk use (1 counted content bytes) */

typedef struct size_file {
  uint64_t magic;
  uint64_t bytes;
} size_file;

uint64_t gpujit__disk_usage(const char *path)
{
  struct stat st;
  return lstat(path, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

int gpujit__cache_total_open(gpujit_cache *c, uint64_t *bytes, bool *known)
{
  char p[PATH_MAX];
  size_file s;
  int fd;
  snprintf(p, sizeof(p), "%s/size", c->dir);
  *known = false;
  *bytes = 0;
  if ((fd = gpujit__lockfile_open(p, O_RDWR | O_CREAT | O_NOFOLLOW, 0600)) < 0)
    return -1;
  if (gpujit__lockfile_lock(fd, LOCK_EX) < 0) {
    gpujit__lockfile_close(fd);
    return -1;
  }
  if (pread(fd, &s, sizeof(s), 0) == (ssize_t)sizeof(s) && s.magic == SIZE_MAGIC) {
    *known = true;
    *bytes = s.bytes;
  }
  return fd;
}

void gpujit__cache_total_put(int fd, uint64_t bytes, bool write)
{
  size_file s = {SIZE_MAGIC, bytes};
  if (fd < 0)
    return;
  if (write && pwrite(fd, &s, sizeof(s), 0) != (ssize_t)sizeof(s))
    gpujit__log(GPUJIT_LOG_DEBUG, "cache size total not updated: %s", strerror(errno));
  gpujit__lockfile_close(fd);
}

void gpujit__cache_total_add(gpujit_cache *c, int64_t delta)
{
  uint64_t bytes;
  bool known;
  int fd;
  if (!delta || !c->writable || (fd = gpujit__cache_total_open(c, &bytes, &known)) < 0)
    return;
  if (delta < 0 && (uint64_t)-delta > bytes)
    bytes = 0;
  else
    bytes += (uint64_t)delta;
  gpujit__cache_total_put(fd, bytes, known);
}

/* The directory part of `path`. */
static void parent_of(char *out, size_t size, const char *path)
{
  const char *slash = strrchr(path, '/');
  snprintf(out, size, "%.*s", (int)(slash ? slash - path : 0), path);
}

uint64_t gpujit__cache_dirs_usage(const char *dir)
{
  char up[PATH_MAX];
  parent_of(up, sizeof(up), dir);
  return gpujit__disk_usage(dir) + (up[0] ? gpujit__disk_usage(up) : 0);
}

int gpujit__cache_write_record(gpujit_cache *c, const char *path, const char *magic, const void *data, size_t len)
{
  char parent[PATH_MAX];
  uint64_t before, dirs_before;
  int err;
  parent_of(parent, sizeof(parent), path);
  before = gpujit__disk_usage(path);
  dirs_before = gpujit__cache_dirs_usage(parent);
  if ((err = gpujit__write_blob(c->dir, path, magic, data, len)) == 0) /* a new or grown shard directory counts too */
    gpujit__cache_total_add(c, (int64_t)(gpujit__disk_usage(path) + gpujit__cache_dirs_usage(parent)) -
                                   (int64_t)(before + dirs_before));
  return err;
}
