/*
 * The headers an include scan read, kept for the next scan in this process (issue 62): a
 * project's worker compiles module after module of the same toolkit headers, and each compile
 * scans them again — for the cache key, and before a precompiled header is made or used — which
 * was most of what gpujit added to a compile that used a PCH (~600 CUB headers, ~7 MB, their
 * directive lines found anew each time). A kept header is used again only while the file has the
 * device, inode, size, mtime and ctime it had when read (ctime changes with every write and no
 * user can set it back), and only one that had not changed for a second before it was read (a
 * write in the same clock tick could keep the stamp), and only the toolkit's own headers (under
 * the CUDA root: what every module of a project reads, and what no edit loop changes). Off unless
 * gpujit__inc_files_keep() is called.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/strset.h"
#include "compile/includes/includes.h"
#include "compile/includes/scan.h"
#include "compile/toolkit/toolkit.h"

#define SETTLED_NS 1000000000LL

typedef struct kept {
  char *path;
  struct stat st;
  gpujit__buf data, directives;
} kept;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kept *files;
static size_t count, cap, bytes, budget, hits;
static gpujit__strset byname;

void gpujit__inc_files_keep(size_t max_bytes)
{
  pthread_mutex_lock(&lock);
  budget = max_bytes;
  pthread_mutex_unlock(&lock);
}

size_t gpujit__inc_files_hits(void)
{
  size_t n;
  pthread_mutex_lock(&lock);
  n = hits;
  pthread_mutex_unlock(&lock);
  return n;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static long long ns_of(const struct timespec *t) { return (long long)t->tv_sec * 1000000000LL + t->tv_nsec; }

static int copy_buf(gpujit__buf *to, const gpujit__buf *from)
{
  return gpujit__buf_put(to, from->data ? from->data : "", from->len);
}

/* Under the lock: what is kept of `path` while it is as it was, else NULL. */
static const kept *find(const char *path, const struct stat *now)
{
  size_t i;
  if (!gpujit__strset_find(&byname, path, &i))
    return NULL;
  return same_file(&files[i].st, now) ? &files[i] : NULL;
}

/* Under the lock: keep what was read, replacing an older reading of the same path. */
static void keep(const char *path, const struct stat *st, const gpujit__inc_file *f)
{
  size_t i, size = f->data.len + f->directives.len;
  kept *k;
  if (bytes + size > budget)
    return;
  if (gpujit__strset_find(&byname, path, &i)) {
    k = &files[i];
    bytes -= k->data.len + k->directives.len;
    k->data.len = k->directives.len = 0;
  } else {
    if (!(k = gpujit__grow(files, &cap, count, sizeof(*files), 256)))
      return;
    files = k;
    k = &files[count];
    memset(k, 0, sizeof(*k));
    if (!(k->path = gpujit__strdup(path)) || gpujit__strset_put(&byname, k->path, count) < 0) {
      free(k->path);
      gpujit_error_clear();
      return;
    }
    count++;
  }
  if (copy_buf(&k->data, &f->data) < 0 || copy_buf(&k->directives, &f->directives) < 0) {
    gpujit_error_clear();
    k->st.st_ino = 0; /* never matches: read again */
    k->st.st_dev = (dev_t)-1;
    return;
  }
  k->st = *st;
  bytes += size;
}

int gpujit__inc_file_load(gpujit__inc_file *f, const char *path)
{
  struct stat before, after;
  struct timespec now;
  bool on, unsure = false;
  int err;
  pthread_mutex_lock(&lock);
  on = budget > 0 && gpujit__cuda_root() && gpujit__path_under(path, gpujit__cuda_root());
  if (on && stat(path, &before) == 0) {
    const kept *k = find(path, &before);
    if (k && (copy_buf(&f->data, &k->data) < 0 || copy_buf(&f->directives, &k->directives) < 0)) {
      pthread_mutex_unlock(&lock);
      return GPUJIT_ENOMEM;
    }
    if (k) {
      f->has_directives = true;
      hits++;
      pthread_mutex_unlock(&lock);
      return 0;
    }
  } else {
    on = false;
  }
  pthread_mutex_unlock(&lock);
  clock_gettime(CLOCK_REALTIME, &now);
  if ((err = gpujit__file_read(&f->data, path)) < 0 || !on)
    return err;
  /* its directive lines now, kept with it; a file whose reading is unsure is not kept (the scan
   * must say so each time) */
  if ((err = gpujit__directive_lines(&f->directives, f->data.data ? f->data.data : "", f->data.len, &unsure)) < 0)
    return err;
  if (unsure) {
    gpujit__buf_free(&f->directives);
    return 0;
  }
  f->has_directives = true;
  if (stat(path, &after) == 0 && same_file(&before, &after) &&
      ns_of(&after.st_mtim) < ns_of(&now) - SETTLED_NS && ns_of(&after.st_ctim) < ns_of(&now) - SETTLED_NS) {
    pthread_mutex_lock(&lock);
    keep(path, &after, f);
    pthread_mutex_unlock(&lock);
  }
  return 0;
}
