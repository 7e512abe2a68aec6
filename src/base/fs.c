/* Whole-file I/O and paths: reads, atomic writes, absolute paths, directories. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"

static const char *file_kind(mode_t m)
{
  return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

int gpujit__file_read(gpujit__buf *out, const char *path)
{
  struct stat st;
  return gpujit__file_read_stat(out, path, &st);
}

int gpujit__file_read_stat(gpujit__buf *out, const char *path, struct stat *opened)
{
  struct stat st;
  int fd, err = 0;
  ssize_t n;

  out->len = 0;
  /* O_NONBLOCK: opening a FIFO that no one writes must not wait; it is refused below */
  if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
    return gpujit__error(gpujit__errno_code(errno), "%s: %s", path, strerror(errno));
  if (fstat(fd, &st) < 0) {
    err = gpujit__error(GPUJIT_EIO, "%s: %s", path, strerror(errno));
    goto done;
  }
  if (S_ISDIR(st.st_mode)) {
    err = gpujit__error(GPUJIT_EIO, "%s: is a directory, not a file", path);
    goto done;
  }
  /* /dev/zero would be read until memory runs out, a FIFO until its writer ends */
  if (!S_ISREG(st.st_mode)) {
    err = gpujit__error(GPUJIT_EIO, "%s: is %s; gpujit reads regular files only", path, file_kind(st.st_mode));
    goto done;
  }
  if ((uint64_t)st.st_size > GPUJIT__MAX_INPUT_BYTES) {
    err = gpujit__error(GPUJIT_EIO, "%s: %lld bytes, over gpujit's limit of %llu MiB for one input file", path,
                        (long long)st.st_size, (unsigned long long)(GPUJIT__MAX_INPUT_BYTES >> 20));
    goto done;
  }
  /* O_NONBLOCK stays: it does nothing to a regular file's reads (clearing it cost two system
   * calls a file, 1,200 of a CUB miss's record) */
  *opened = st;
  if ((err = gpujit__buf_reserve(out, (size_t)st.st_size)) < 0)
    goto done;
  for (;;) {
    if ((err = gpujit__buf_reserve(out, 4096)) < 0)
      goto done;
    n = read(fd, out->data + out->len, out->cap - out->len - 1);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      err = gpujit__error(GPUJIT_EIO, "%s: %s", path, strerror(errno));
      goto done;
    }
    if (n == 0)
      break;
    out->len += (size_t)n;
    /* all the size it was opened with: no read more to learn of its end (a file that grows
     * after is one that grew after the read) — a system call a header of a miss's record */
    if (st.st_size > 0 && out->len == (size_t)st.st_size)
      break;
    if (out->len > GPUJIT__MAX_INPUT_BYTES) { /* it grew while being read */
      err = gpujit__error(GPUJIT_EIO, "%s: over gpujit's limit of %llu MiB for one input file", path,
                          (unsigned long long)(GPUJIT__MAX_INPUT_BYTES >> 20));
      goto done;
    }
  }
  out->data[out->len] = '\0';
done:
  close(fd);
  return err;
}

int gpujit__write_all(int fd, const void *bytes, size_t len)
{
  const char *data = bytes;
  while (len) {
    ssize_t n = write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

int gpujit__file_write_atomic(const char *path, const void *data, size_t len)
{
  return gpujit__file_write_atomic_ex(path, data, len, true);
}

int gpujit__fsize_check(const char *path, uint64_t len)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || len <= (uint64_t)rl.rlim_cur)
    return 0;
  return gpujit__error(GPUJIT_EIO, "%s: %llu bytes would pass the file size limit (ulimit -f: %llu bytes)", path,
                       (unsigned long long)len, (unsigned long long)rl.rlim_cur);
}

int gpujit__dir_open_beneath(const char *top, const char *path, unsigned mode)
{
  const char *rel = gpujit__path_under(path, top);
  char comp[NAME_MAX + 1];
  int dfd;
  if (!rel && strcmp(path, top) != 0)
    return gpujit__error(GPUJIT_EINVAL, "%s: not beneath %s", path, top);
  if ((dfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    return gpujit__error(gpujit__errno_code(errno), "%s: %s", top, strerror(errno));
  while (rel && *rel) {
    size_t n = strcspn(rel, "/");
    int next;
    if (n > NAME_MAX) {
      close(dfd);
      return gpujit__error(GPUJIT_EINVAL, "%s: path too long", path);
    }
    memcpy(comp, rel, n);
    comp[n] = '\0';
    rel += n + (rel[n] == '/');
    if (!n || !strcmp(comp, "."))
      continue;
    if (!strcmp(comp, "..")) /* would leave what it walks */
      errno = ELOOP, next = -1;
    else
      next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && (mkdirat(dfd, comp, (mode_t)mode) == 0 || errno == EEXIST))
      next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      int saved = errno;
      close(dfd);
      if (saved == ELOOP || saved == ENOTDIR)
        return gpujit__error(GPUJIT_EIO, "%s: '%s' in it is a symbolic link or no directory: nothing written "
                                          "through it",
                             path, comp);
      return gpujit__error(gpujit__errno_code(saved), "%s: cannot create: %s", path, strerror(saved));
    }
    close(dfd);
    dfd = next;
  }
  return dfd;
}

int gpujit__file_write_atomic_ex(const char *path, const void *data, size_t len, bool durable)
{
  static unsigned counter;
  char tmp[PATH_MAX];
  int fd, saved;

  if ((saved = gpujit__fsize_check(path, len)) < 0)
    return saved;

  if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path, (long)getpid(),
                       __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED)) >= sizeof(tmp))
    return gpujit__error(GPUJIT_EINVAL, "%s: path too long", path);
  if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
    return gpujit__error(gpujit__errno_code(errno) == GPUJIT_ENOENT ? GPUJIT_ENOENT : GPUJIT_EIO,
                         "%s: cannot write: %s", path, strerror(errno));
  if (gpujit__write_all(fd, data, len) < 0 || (durable && fsync(fd) < 0)) {
    saved = errno;
    close(fd);
    unlink(tmp);
    return gpujit__error(GPUJIT_EIO, "%s: write failed: %s", path, strerror(saved));
  }
  if (close(fd) < 0 || rename(tmp, path) < 0) {
    saved = errno;
    unlink(tmp);
    return gpujit__error(GPUJIT_EIO, "%s: cannot publish: %s", path, strerror(saved));
  }
  return 0;
}

/* Collapse "//", "/./" and "/../" in an absolute path, in place. */
void gpujit__normpath(char *p)
{
  char *out = p, *in = p;
  while (*in) {
    if (in[0] == '/' && in[1] == '/') {
      in++;
    } else if (in[0] == '/' && in[1] == '.' && (in[2] == '/' || in[2] == '\0')) {
      in += 2;
    } else if (in[0] == '/' && in[1] == '.' && in[2] == '.' && (in[3] == '/' || in[3] == '\0')) {
      in += 3;
      while (out > p && *--out != '/')
        ;
    } else {
      *out++ = *in++;
    }
  }
  if (out == p)
    *out++ = '/';
  *out = '\0';
}

char *gpujit__abspath(const char *path)
{
  char buf[PATH_MAX], *res;
  if (realpath(path, buf))
    return gpujit__strdup(buf);
  if (path[0] == '/') {
    res = gpujit__strdup(path);
  } else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
      return NULL;
    res = malloc(strlen(cwd) + strlen(path) + 2);
    if (res)
      sprintf(res, "%s/%s", cwd, path);
  }
  if (res)
    gpujit__normpath(res);
  return res;
}

const char *gpujit__path_under(const char *path, const char *dir)
{
  size_t n = dir ? strlen(dir) : 0;
  if (n && strncmp(path, dir, n) == 0 && path[n] == '/')
    return path + n + 1;
  return NULL;
}

char *gpujit__dirname(const char *path)
{
  const char *slash = strrchr(path, '/');
  if (!slash)
    return gpujit__strdup(".");
  if (slash == path)
    return gpujit__strdup("/");
  return gpujit__strndup(path, (size_t)(slash - path));
}

char *gpujit__stem(const char *path)
{
  const char *base = gpujit__basename(path), *dot = strrchr(base, '.');
  return gpujit__strndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
}

const char *gpujit__basename(const char *path)
{
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

bool gpujit__is_dir(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool gpujit__exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

/* mkdir -p from the deepest missing directory down: an existing directory costs one mkdir, not
 * one per component of its path (each an EEXIST after a walk of the path so far). */
static int mkdirs_at(char *buf, size_t len, mode_t mode)
{
  char *slash;
  if (mkdir(buf, mode) == 0 || errno == EEXIST)
    return 0;
  if (errno != ENOENT || !(slash = memrchr(buf, '/', len)) || slash == buf)
    return -1;
  *slash = '\0';
  if (mkdirs_at(buf, (size_t)(slash - buf), mode) < 0)
    return -1;
  *slash = '/';
  return mkdir(buf, mode) == 0 || errno == EEXIST ? 0 : -1;
}

int gpujit__mkdirs(const char *path, unsigned mode)
{
  char buf[PATH_MAX];
  size_t len = strlen(path);
  if (len >= sizeof(buf))
    return gpujit__error(GPUJIT_EINVAL, "%s: path too long", path);
  memcpy(buf, path, len + 1);
  while (len > 1 && buf[len - 1] == '/')
    buf[--len] = '\0';
  if (mkdirs_at(buf, len, (mode_t)mode) < 0)
    return gpujit__error(gpujit__errno_code(errno), "%s: cannot create: %s", buf, strerror(errno));
  if (!gpujit__is_dir(path))
    return gpujit__error(GPUJIT_EIO, "%s: not a directory", path);
  return 0;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int gpujit__rmrf(const char *path)
{
  if (nftw(path, rm_cb, 32, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT)
    return gpujit__error(GPUJIT_EIO, "%s: cannot remove: %s", path, strerror(errno));
  return 0;
}

char *gpujit__cache_default_dir(const char **origin)
{
  const char *env = getenv("GPUJIT_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char buf[PATH_MAX];
  const char *from = env && *env ? "GPUJIT_CACHE_DIR" : xdg && *xdg ? "XDG_CACHE_HOME" : "HOME";
  if (env && *env)
    snprintf(buf, sizeof(buf), "%s", env);
  else if (xdg && *xdg)
    snprintf(buf, sizeof(buf), "%s/gpujit", xdg);
  else
    snprintf(buf, sizeof(buf), "%s/.cache/gpujit", home && *home ? home : "/tmp");
  if (origin)
    *origin = from;
  return gpujit__abspath(buf);
}
