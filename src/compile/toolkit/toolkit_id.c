/* What identifies the toolkit in cache keys: the content of what makes an image — NVRTC, its
 * builtins, nvJitLink, ptxas — never how its path is spelled or when it was installed (the
 * request key adds the root's real path, module/key.c: /usr/local/cuda and the
 * /usr/local/cuda-13.0 it links to share entries). Its headers are no part of it: they are each
 * build's dependencies, verified on every lookup. Hashing some 200 MB on every process would cost
 * a cache hit tens of milliseconds: each file's hash is computed once and remembered in
 * toolkit-hashes in the default cache directory, under the file's real path, size, inode, mtime
 * and ctime; a hit then reads that file and stats the libraries (docs/cache-format.md). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/hash.h"
#include "compile/toolkit/toolkit.h"

static char toolkit_id[2048];
static pthread_once_t toolkit_id_once = PTHREAD_ONCE_INIT;
static char *memo;        /* the remembered hashes, read once */
static char memo_path[PATH_MAX];

/* The files the id hashed, with the stat each hash is of: a miss's record of NVRTC's builtins
 * library (4.4 MB, which NVRTC maps) takes its hash from here instead of reading it again. */
typedef struct known_file {
  char real[PATH_MAX];
  struct stat st;
  char hash[33];
} known_file;
static known_file known[8];
static size_t nknown;

/* $GPUJIT_TOOLKIT_HASHES, else toolkit-hashes in the default cache directory. */
static void memo_open(void)
{
  const char *env = getenv("GPUJIT_TOOLKIT_HASHES");
  char *cache = NULL;
  gpujit__buf b = {0};
  if (env && *env)
    snprintf(memo_path, sizeof(memo_path), "%s", env);
  else if ((cache = gpujit__cache_default_dir(NULL)))
    snprintf(memo_path, sizeof(memo_path), "%s/toolkit-hashes", cache);
  free(cache);
  if (!memo_path[0])
    return;
  if (gpujit__file_read(&b, memo_path) == 0 && gpujit__buf_put(&b, "", 1) == 0)
    memo = b.data;
  else
    gpujit__buf_free(&b);
}

/* XXH3-128 of a file's bytes, in 32 hex digits; false when it cannot be read. */
static bool file_hash(const char *path, const struct stat *st, char out[33])
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  void *m;
  if (fd < 0)
    return false;
  m = st->st_size ? mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
  close(fd);
  if (m == MAP_FAILED)
    return false;
  gpujit__hash_hex(out, m, (size_t)st->st_size);
  if (m)
    munmap(m, (size_t)st->st_size);
  return true;
}

/* The content hash of `real`, remembered under its stat (a line "HASH SIZE INODE MTIME CTIME
 * PATH"): the ctime too, which no one can set back, so a file rewritten in place with its size and
 * mtime put back is hashed again. */
static bool content_hash(const char *real, const struct stat *st, char out[33])
{
  char stamp[PATH_MAX + 160], line[PATH_MAX + 240];
  struct timespec now;
  int fd;
  snprintf(stamp, sizeof(stamp), " %lld %llu %lld.%09ld %lld.%09ld %s\n", (long long)st->st_size,
           (unsigned long long)st->st_ino, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
           (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec, real);
  for (const char *at = memo; at && (at = strstr(at, stamp)) != NULL; at++) /* "HASH" + stamp, at a line's start */
    if (at - memo >= 32 && (at - memo == 32 || at[-33] == '\n')) {
      memcpy(out, at - 32, 32);
      out[32] = '\0';
      if (gpujit__is_digest(out, 32))
        return true;
    }
  if (!file_hash(real, st, out))
    return false;
  /* a file stamped in this clock tick may change again under the same stamp: not remembered */
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  if ((long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec >=
      (long long)now.tv_sec * 1000000000LL + now.tv_nsec)
    return true;
  snprintf(line, sizeof(line), "%s%s", out, stamp);
  char *dir = gpujit__dirname(memo_path);
  bool made = dir && gpujit__mkdirs(dir, 0755) == 0;
  free(dir);
  /* A FIFO there would wait for a reader, a link would have its target appended to: only a
   * regular file of its own is written (O_NONBLOCK opens a FIFO at once, to be refused). */
  if (made && (fd = open(memo_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
                         0644)) >= 0) {
    struct stat own;
    if (fstat(fd, &own) == 0 && S_ISREG(own.st_mode) && write(fd, line, strlen(line)) < 0) {
      /* unwritable: hashed again next time */
    }
    close(fd);
  }
  return true;
}

static void lib_id(char *out, size_t size, const char *path, const char *what)
{
  char real[PATH_MAX], h[33];
  struct stat st;
  if (realpath(path, real) && stat(real, &st) == 0 && S_ISREG(st.st_mode) && content_hash(real, &st, h)) {
    snprintf(out, size, "%s=%s:%lld", what, h, (long long)st.st_size);
    if (nknown < sizeof(known) / sizeof(known[0])) {
      snprintf(known[nknown].real, sizeof(known[nknown].real), "%s", real);
      known[nknown].st = st;
      memcpy(known[nknown].hash, h, sizeof(h));
      nknown++;
    }
  } else
    snprintf(out, size, "%s=%s", what, path); /* not found: the name the loader would look for */
}

/* NVRTC's builtins library, beside the NVRTC it loads with (libnvrtc-builtins.so.MAJOR.MINOR):
 * its headers and code reach every image NVRTC makes. */
static void builtins_id(char *out, size_t size)
{
  char real[PATH_MAX], pattern[PATH_MAX + 32];
  glob_t g;
  size_t at = 0;
  out[0] = '\0';
  if (!realpath(gpujit__nvrtc_library_path(), real) || !strrchr(real, '/'))
    return;
  *strrchr(real, '/') = '\0';
  snprintf(pattern, sizeof(pattern), "%s/libnvrtc-builtins.so.*", real);
  if (glob(pattern, 0, NULL, &g) != 0)
    return;
  for (size_t i = 0; i < g.gl_pathc && at < size; i++) {
    lib_id(out + at, size - at, g.gl_pathv[i], "builtins");
    at += strlen(out + at);
    if (at + 1 < size)
      out[at++] = ';', out[at] = '\0';
  }
  globfree(&g);
}

static void compute_toolkit_id(void)
{
  char a[256], b[256], c[256], d[1024];
  const char *ptxas = gpujit__ptxas_path();
  memo_open();
  lib_id(a, sizeof(a), gpujit__nvrtc_library_path(), "nvrtc");
  lib_id(b, sizeof(b), gpujit__nvjitlink_library_path(), "nvjitlink");
  /* the lean path's cubins are ptxas's: pip and conda ship it apart from NVRTC */
  if (ptxas)
    lib_id(c, sizeof(c), ptxas, "ptxas");
  else
    snprintf(c, sizeof(c), "ptxas=none");
  builtins_id(d, sizeof(d));
  snprintf(toolkit_id, sizeof(toolkit_id), "%s;%s;%s;%s", a, b, c, d);
  free(memo);
  memo = NULL;
}

const char *gpujit__toolkit_id(void)
{
  pthread_once(&toolkit_id_once, compute_toolkit_id);
  return toolkit_id;
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

bool gpujit__toolkit_known_hash(const char *path, const struct stat *st, char out[33])
{
  char real[PATH_MAX];
  gpujit__toolkit_id();
  if (!S_ISREG(st->st_mode) || !realpath(path, real))
    return false;
  for (size_t i = 0; i < nknown; i++)
    if (!strcmp(known[i].real, real) && same_stat(&known[i].st, st)) {
      memcpy(out, known[i].hash, 33);
      return true;
    }
  return false;
}
