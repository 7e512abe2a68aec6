/* Files the user names for gpujit to write (base/output.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/output.h"

static int refuse(const char *path, const char *what)
{
  return gpujit__error(GPUJIT_EINVAL, "%s: is %s; gpujit writes regular files, character devices and FIFOs "
                                      "and replaces nothing else: name another path",
                       path, what);
}

static int open_through(gpujit__output *o, int extra)
{
  /* O_NOFOLLOW: the node checked above, not a link put there since */
  if ((o->fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | extra)) < 0)
    return gpujit__error(GPUJIT_EIO, "%s: cannot write: %s", o->path, strerror(errno));
  o->through = true;
  return 0;
}

/* A FIFO: opened for writing without waiting on a reader that may never come (a profile's page
 * to a FIFO nobody reads hung gpujit at its end). A reader starting alongside gets a moment. */
static int open_fifo(gpujit__output *o)
{
  for (int tries = 0;; tries++) {
    if ((o->fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) >= 0)
      break;
    if (errno != ENXIO)
      return gpujit__error(GPUJIT_EIO, "%s: cannot write: %s", o->path, strerror(errno));
    if (tries == GPUJIT__FIFO_WAIT_MS / 10)
      return gpujit__error(GPUJIT_EIO, "%s: cannot write: a FIFO that nothing reads (waited %d s for a reader): "
                                       "start its reader first, or name a file",
                           o->path, GPUJIT__FIFO_WAIT_MS / 1000);
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  /* a reader is there: the writes themselves may block while it reads, as a pipe's do */
  fcntl(o->fd, F_SETFL, fcntl(o->fd, F_GETFL) & ~O_NONBLOCK);
  o->through = true;
  return 0;
}

int gpujit__std_fd(const char *path)
{
  const char *n = !strcmp(path, "/dev/stdout")           ? "1"
                  : !strcmp(path, "/dev/stderr")         ? "2"
                  : !strncmp(path, "/dev/fd/", 8)        ? path + 8
                  : !strncmp(path, "/proc/self/fd/", 14) ? path + 14
                                                         : NULL;
  long fd = 0;
  if (!n || !*n || strlen(n) > 9 || strspn(n, "0123456789") != strlen(n))
    return -1;
  for (; *n; n++)
    fd = fd * 10 + (*n - '0');
  return (int)fd;
}

/* /dev/stdout and its kin: the descriptor the shell set up, itself (reopening the link's target
 * would truncate a redirected file from its start, and the link is no file to replace). */
static int open_std(gpujit__output *o, int fd)
{
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
    return gpujit__error(GPUJIT_EIO, "%s: cannot write: %s", o->path,
                         flags < 0 ? "that descriptor is not open" : "that descriptor is open for reading only");
  if ((o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
    return gpujit__error(GPUJIT_EIO, "%s: cannot write: %s", o->path, strerror(errno));
  o->through = true;
  return 0;
}

int gpujit__output_open(gpujit__output *o, const char *path)
{
  static unsigned counter;
  struct stat st;
  bool exists;
  memset(o, 0, sizeof(*o));
  o->fd = -1;
  if ((size_t)snprintf(o->path, sizeof(o->path), "%s", path) >= sizeof(o->path))
    return gpujit__error(GPUJIT_EINVAL, "%s: path too long", path);
  if (gpujit__std_fd(path) >= 0)
    return open_std(o, gpujit__std_fd(path));
  if (!(exists = lstat(path, &st) == 0) && errno != ENOENT)
    return gpujit__error(errno == ENOTDIR ? GPUJIT_ENOENT : GPUJIT_EIO, "%s: cannot write: %s", path, strerror(errno));
  if (exists && S_ISFIFO(st.st_mode))
    return open_fifo(o);
  if (exists && S_ISCHR(st.st_mode))
    return open_through(o, 0);
  if (exists && !S_ISREG(st.st_mode))
    return refuse(path, S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a directory"
                        : S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket" : "no regular file");
  if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%ld.%u", path, (long)getpid(),
                       __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED)) >= sizeof(o->tmp))
    return gpujit__error(GPUJIT_EINVAL, "%s: path too long", path);
  if ((o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) >= 0)
    return 0;
  /* A file the user may write in a directory they may not (another user's, a read-only mount's
   * writable file): written in place, not atomically, rather than not at all. */
  if (exists && (errno == EACCES || errno == EPERM || errno == EROFS) && access(path, W_OK) == 0) {
    o->tmp[0] = '\0';
    return open_through(o, O_TRUNC);
  }
  {
    int saved = errno;
    o->tmp[0] = '\0';
    return gpujit__error(saved == ENOENT || saved == ENOTDIR ? GPUJIT_ENOENT : GPUJIT_EIO, "%s: cannot write: %s", path,
                         strerror(saved));
  }
}

int gpujit__output_commit(gpujit__output *o)
{
  int saved;
  if (o->fd >= 0 && close(o->fd) < 0 && errno != EINTR) {
    saved = errno;
    o->fd = -1;
    gpujit__output_abort(o);
    return gpujit__error(GPUJIT_EIO, "%s: write failed: %s", o->path, strerror(saved));
  }
  o->fd = -1;
  if (o->tmp[0] && rename(o->tmp, o->path) < 0) {
    saved = errno;
    gpujit__output_abort(o);
    return gpujit__error(GPUJIT_EIO, "%s: cannot publish: %s", o->path, strerror(saved));
  }
  o->tmp[0] = '\0';
  return 0;
}

void gpujit__output_abort(gpujit__output *o)
{
  if (o->fd >= 0)
    close(o->fd);
  o->fd = -1;
  if (o->tmp[0])
    unlink(o->tmp);
  o->tmp[0] = '\0';
}

int gpujit__output_write(const char *path, const void *data, size_t len)
{
  gpujit__output o;
  int err = gpujit__output_open(&o, path);
  if (err == 0 && gpujit__write_all(o.fd, data, len) < 0) {
    err = gpujit__error(GPUJIT_EIO, "%s: write failed: %s", path, strerror(errno));
    gpujit__output_abort(&o);
    return err;
  }
  return err < 0 ? err : gpujit__output_commit(&o);
}

int gpujit__file_update(const char *path, const void *data, size_t len)
{
  gpujit__buf old = {0};
  struct stat st;
  bool same = false;
  if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len) {
    same = gpujit__file_read(&old, path) == 0 && old.len == len && (len == 0 || memcmp(old.data, data, len) == 0);
    gpujit__buf_free(&old);
    gpujit_error_clear();
  }
  return same ? 1 : gpujit__output_write(path, data, len);
}
