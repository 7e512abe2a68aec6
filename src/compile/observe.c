/* What NVRTC looked at during a compile, seen through its own imports. NVRTC resolves every
 * #include and __has_include by calling libc in the compiling process: stat() and open() on
 * each candidate in search order, the missing ones failing with ENOENT. Its GOT slots for those
 * functions are rebound here to wrappers that call the function NVRTC would have called and note
 * the path and the answer while a compile is being observed; outside one they only forward. No
 * other object's slots change, so the host program's own file activity is not seen. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "compile/observe.h"

/* The compile being observed, or NULL; set and cleared under `serial`, read by the wrappers. */
static gpujit__observed *active;
static pthread_mutex_t serial = PTHREAD_MUTEX_INITIALIZER; /* one observed compile at a time */
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER; /* NVRTC's own threads may probe */
static char unavailable[512] = "NVRTC was not loaded by gpujit";
static unsigned long probes;

unsigned long gpujit__observe_probes(void) { return __atomic_load_n(&probes, __ATOMIC_RELAXED); }

const char *gpujit__observe_unavailable(void) { return unavailable[0] ? unavailable : NULL; }

/* ---- the record: items in first-seen order, an open-addressing index by path ---- */

struct gpujit__observed_index {
  size_t *slots; /* item number + 1; 0 is empty */
  size_t cap;
};

static uint64_t path_hash(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int index_grow(gpujit__observed *o)
{
  struct gpujit__observed_index *ix = o->index;
  size_t cap = ix && ix->cap ? ix->cap * 2 : 256, *slots;
  if (!ix && !(ix = o->index = calloc(1, sizeof(*ix))))
    return GPUJIT_ENOMEM;
  if (!(slots = calloc(cap, sizeof(*slots))))
    return GPUJIT_ENOMEM;
  for (size_t i = 0; i < o->count; i++) {
    size_t at = path_hash(o->items[i].path) & (cap - 1);
    while (slots[at])
      at = (at + 1) & (cap - 1);
    slots[at] = i + 1;
  }
  free(ix->slots);
  ix->slots = slots;
  ix->cap = cap;
  return 0;
}

/* The item for `path`, or NULL; `*slot` is where a new one goes. */
static gpujit__probe *index_find(gpujit__observed *o, const char *path, size_t **slot)
{
  struct gpujit__observed_index *ix = o->index;
  size_t at = path_hash(path) & (ix->cap - 1);
  while (ix->slots[at]) {
    gpujit__probe *p = &o->items[ix->slots[at] - 1];
    if (strcmp(p->path, path) == 0)
      return p;
    at = (at + 1) & (ix->cap - 1);
  }
  *slot = &ix->slots[at];
  return NULL;
}

static void set_why(gpujit__observed *o, const char *fmt, ...) GPUJIT__PRINTF(2, 3);
static void set_why(gpujit__observed *o, const char *fmt, ...)
{
  va_list ap;
  if (o->why[0])
    return; /* the first reason stands */
  va_start(ap, fmt);
  vsnprintf(o->why, sizeof(o->why), fmt, ap);
  va_end(ap);
}

static const char *kind_name(gpujit__probe_kind k)
{
  return k == GPUJIT__PROBE_FILE ? "a file" : k == GPUJIT__PROBE_ABSENT ? "absent" : "no regular file";
}

/* Add a probe (or check it against the first look at the same path). */
static void add(gpujit__observed *o, const gpujit__probe *p, const char *path)
{
  gpujit__probe *seen, *n;
  size_t *slot = NULL;
  if ((!o->index || (o->count + 1) * 2 > o->index->cap) && index_grow(o) < 0) {
    set_why(o, "out of memory while observing the compile");
    return;
  }
  if ((seen = index_find(o, path, &slot))) {
    seen->written |= p->written;
    if (seen->written)
      return;
    if (seen->kind != p->kind)
      set_why(o, "%s changed during the compile (%s, then %s)", path, kind_name(seen->kind), kind_name(p->kind));
    else if (p->kind == GPUJIT__PROBE_FILE &&
             (seen->ino != p->ino || seen->dev != p->dev || seen->size != p->size || seen->mtime_ns != p->mtime_ns ||
              seen->ctime_ns != p->ctime_ns))
      set_why(o, "%s changed during the compile", path);
    seen->read |= p->read;
    seen->listed |= p->listed;
    return;
  }
  if (!(n = gpujit__grow(o->items, &o->cap, o->count, sizeof(*o->items), 64)) ||
      !(n[o->count].path = gpujit__strdup(path))) {
    if (n)
      o->items = n;
    gpujit_error_clear();
    set_why(o, "out of memory while observing the compile");
    return;
  }
  o->items = n;
  {
    char *copy = n[o->count].path;
    n[o->count] = *p;
    n[o->count].path = copy;
    if (!p->seen_ns) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME_COARSE, &ts);
      n[o->count].seen_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    }
  }
  *slot = ++o->count;
}

static void fill_stat(gpujit__probe *p, const struct stat *st)
{
  p->kind = S_ISREG(st->st_mode) ? GPUJIT__PROBE_FILE : GPUJIT__PROBE_OTHER;
  p->dev = (uint64_t)st->st_dev;
  p->ino = (uint64_t)st->st_ino;
  p->size = (uint64_t)st->st_size;
  p->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
  p->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* A path NVRTC named relative to a directory descriptor, made relative to the working
 * directory's view: absolute through /proc, or NULL when that cannot be said. */
static const char *at_path(int dirfd, const char *path, char *buf, size_t size)
{
  char link[64];
  ssize_t n;
  if (!path)
    return NULL;
  if (dirfd == AT_FDCWD || path[0] == '/')
    return path;
  snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
  if ((n = readlink(link, buf, size - 1)) <= 0 || buf[0] != '/')
    return NULL;
  buf[n] = '\0';
  if ((size_t)n + 1 + strlen(path) + 1 > size)
    return NULL;
  buf[n] = '/';
  strcpy(buf + n + 1, path);
  return buf;
}

/* What a failed call means for the path: absent, or (errno kept in `err`) an answer that cannot
 * be replayed as a dependency. */
static void note_failure(gpujit__observed *o, const char *path, int err, const char *fn)
{
  gpujit__probe p = {.kind = GPUJIT__PROBE_ABSENT};
  if (err == ENOENT || err == ENOTDIR)
    add(o, &p, path);
  else
    set_why(o, "NVRTC's %s(%s) failed: %s", fn, path, strerror(err));
}

/* A probe whose answer is `st` (follow: stat, not lstat), or a failure with `err`. */
static void note_stat(const char *fn, int dirfd, const char *path, const struct stat *st, int err, bool nofollow)
{
  gpujit__observed *o;
  char buf[PATH_MAX];
  pthread_mutex_lock(&note_lock);
  if ((o = active) != NULL) {
    const char *at = at_path(dirfd, path, buf, sizeof(buf));
    __atomic_fetch_add(&probes, 1, __ATOMIC_RELAXED);
    if (!at)
      set_why(o, "NVRTC's %s named %s relative to a directory gpujit cannot name", fn, path ? path : "(null)");
    else if (err)
      note_failure(o, at, err, fn);
    else if (nofollow && S_ISLNK(st->st_mode))
      set_why(o, "NVRTC looked at the symbolic link %s itself (%s)", at, fn);
    else {
      gpujit__probe p = {0};
      fill_stat(&p, st);
      add(o, &p, at);
    }
  }
  pthread_mutex_unlock(&note_lock);
}

/* A probe of `path` answered by calling stat ourselves (access, opendir, and the like). */
static void note_path(const char *fn, int dirfd, const char *path, int err)
{
  struct stat st;
  char buf[PATH_MAX];
  const char *at;
  if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE))
    return;
  at = at_path(dirfd, path, buf, sizeof(buf));
  if (err == 0 && at && stat(at, &st) != 0)
    err = errno;
  note_stat(fn, dirfd, path, &st, err, false);
}

/* An open: for reading, a dependency with its identity; for writing, NVRTC's own output. */
static void note_open(const char *fn, int dirfd, const char *path, int fd, int err, bool writes)
{
  struct stat st;
  if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE))
    return;
  if (writes) {
    gpujit__observed *o;
    char buf[PATH_MAX];
    pthread_mutex_lock(&note_lock);
    if ((o = active) != NULL) {
      const char *at = at_path(dirfd, path, buf, sizeof(buf));
      gpujit__probe p = {.written = true};
      if (at)
        add(o, &p, at);
      else
        set_why(o, "NVRTC's %s named %s relative to a directory gpujit cannot name", fn, path ? path : "(null)");
    }
    pthread_mutex_unlock(&note_lock);
    return;
  }
  if (fd >= 0 && fstat(fd, &st) != 0)
    err = errno;
  if (fd >= 0 && !err) {
    gpujit__observed *o;
    char buf[PATH_MAX];
    pthread_mutex_lock(&note_lock);
    if ((o = active) != NULL) {
      const char *at = at_path(dirfd, path, buf, sizeof(buf));
      gpujit__probe p = {0};
      __atomic_fetch_add(&probes, 1, __ATOMIC_RELAXED);
      fill_stat(&p, &st);
      p.read = true;
      if (at)
        add(o, &p, at);
      else
        set_why(o, "NVRTC's %s named %s relative to a directory gpujit cannot name", fn, path ? path : "(null)");
    }
    pthread_mutex_unlock(&note_lock);
    return;
  }
  note_stat(fn, dirfd, path, &st, err, false);
}

/* A call that reads the file system in a way no probe can replay. */
static void note_unobservable(const char *what)
{
  gpujit__observed *o;
  pthread_mutex_lock(&note_lock);
  if ((o = active) != NULL)
    set_why(o, "NVRTC %s during the compile", what);
  pthread_mutex_unlock(&note_lock);
}

static bool open_writes(int flags) { return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0; }
static bool mode_writes(const char *mode) { return mode && (mode[0] != 'r' || strchr(mode, '+')); }

/* ---- the wrappers: each calls what NVRTC's slot held ---- */

#define GPUJIT__OBSERVED_FUNCS(X)                                                                          \
  X(open) X(open64) X(__open_2) X(__open64_2) X(openat) X(openat64) X(__openat_2) X(__openat64_2)        \
  X(fopen) X(fopen64) X(freopen) X(freopen64) X(stat) X(stat64) X(lstat) X(lstat64) X(__xstat)           \
  X(__xstat64) X(__lxstat) X(__lxstat64) X(fstatat) X(fstatat64) X(__fxstatat) X(__fxstatat64) X(statx) \
  X(access) X(faccessat) X(euidaccess) X(eaccess) X(readlink) X(readlinkat) X(realpath) X(opendir)      \
  X(scandir) X(scandir64) X(chdir) X(fchdir) X(system) X(popen) X(execv) X(execve) X(execvp) X(syscall)

#define GPUJIT__SLOT(name) void *name;
static struct {
  GPUJIT__OBSERVED_FUNCS(GPUJIT__SLOT)
} real;
#undef GPUJIT__SLOT

#define REAL(name, type) ((type)real.name)

typedef int (*open_fn)(const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*openat2_fn)(int, const char *, int);
typedef FILE *(*fopen_fn)(const char *, const char *);
typedef FILE *(*freopen_fn)(const char *, const char *, FILE *);
typedef int (*stat_fn)(const char *, struct stat *);
typedef int (*xstat_fn)(int, const char *, struct stat *);
typedef int (*fstatat_fn)(int, const char *, struct stat *, int);
typedef int (*fxstatat_fn)(int, int, const char *, struct stat *, int);
typedef int (*statx_fn)(int, const char *, int, unsigned int, struct statx *);
typedef int (*access_fn)(const char *, int);
typedef int (*faccessat_fn)(int, const char *, int, int);
typedef ssize_t (*readlink_fn)(const char *, char *, size_t);
typedef ssize_t (*readlinkat_fn)(int, const char *, char *, size_t);
typedef char *(*realpath_fn)(const char *, char *);
typedef DIR *(*opendir_fn)(const char *);
typedef int (*scandir_fn)(const char *, struct dirent ***, int (*)(const struct dirent *),
                          int (*)(const struct dirent **, const struct dirent **));
typedef int (*chdir_fn)(const char *);
typedef int (*fchdir_fn)(int);
typedef int (*system_fn)(const char *);
typedef FILE *(*popen_fn)(const char *, const char *);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef long (*syscall_fn)(long, ...);

#define OPEN_WRAP(name)                                                                     \
  static int w_##name(const char *path, int flags, ...)                                   \
  {                                                                                        \
    mode_t mode = 0;                                                                       \
    int fd, e;                                                                             \
    if (flags & (O_CREAT | O_TMPFILE)) {                                                   \
      va_list ap;                                                                          \
      va_start(ap, flags);                                                                 \
      mode = (mode_t)va_arg(ap, int);                                                      \
      va_end(ap);                                                                          \
    }                                                                                      \
    fd = REAL(name, open_fn)(path, flags, mode);                                           \
    e = errno;                                                                             \
    note_open(#name, AT_FDCWD, path, fd, fd < 0 ? e : 0, open_writes(flags));              \
    errno = e;                                                                             \
    return fd;                                                                             \
  }
OPEN_WRAP(open)
OPEN_WRAP(open64)

#define OPEN2_WRAP(name)                                                                    \
  static int w_##name(const char *path, int flags)                                        \
  {                                                                                        \
    int fd = REAL(name, open2_fn)(path, flags), e = errno;                                 \
    note_open(#name, AT_FDCWD, path, fd, fd < 0 ? e : 0, open_writes(flags));              \
    errno = e;                                                                             \
    return fd;                                                                             \
  }
OPEN2_WRAP(__open_2)
OPEN2_WRAP(__open64_2)

#define OPENAT_WRAP(name)                                                                   \
  static int w_##name(int dirfd, const char *path, int flags, ...)                        \
  {                                                                                        \
    mode_t mode = 0;                                                                       \
    int fd, e;                                                                             \
    if (flags & (O_CREAT | O_TMPFILE)) {                                                   \
      va_list ap;                                                                          \
      va_start(ap, flags);                                                                 \
      mode = (mode_t)va_arg(ap, int);                                                      \
      va_end(ap);                                                                          \
    }                                                                                      \
    fd = REAL(name, openat_fn)(dirfd, path, flags, mode);                                  \
    e = errno;                                                                             \
    note_open(#name, dirfd, path, fd, fd < 0 ? e : 0, open_writes(flags));                 \
    errno = e;                                                                             \
    return fd;                                                                             \
  }
OPENAT_WRAP(openat)
OPENAT_WRAP(openat64)

#define OPENAT2_WRAP(name)                                                                  \
  static int w_##name(int dirfd, const char *path, int flags)                             \
  {                                                                                        \
    int fd = REAL(name, openat2_fn)(dirfd, path, flags), e = errno;                        \
    note_open(#name, dirfd, path, fd, fd < 0 ? e : 0, open_writes(flags));                 \
    errno = e;                                                                             \
    return fd;                                                                             \
  }
OPENAT2_WRAP(__openat_2)
OPENAT2_WRAP(__openat64_2)

#define FOPEN_WRAP(name)                                                                    \
  static FILE *w_##name(const char *path, const char *mode)                               \
  {                                                                                        \
    FILE *f = REAL(name, fopen_fn)(path, mode);                                            \
    int e = errno;                                                                         \
    note_open(#name, AT_FDCWD, path, f ? fileno(f) : -1, f ? 0 : e, mode_writes(mode));    \
    errno = e;                                                                             \
    return f;                                                                              \
  }
FOPEN_WRAP(fopen)
FOPEN_WRAP(fopen64)

#define FREOPEN_WRAP(name)                                                                  \
  static FILE *w_##name(const char *path, const char *mode, FILE *stream)                 \
  {                                                                                        \
    FILE *f = REAL(name, freopen_fn)(path, mode, stream);                                  \
    int e = errno;                                                                         \
    if (path)                                                                              \
      note_open(#name, AT_FDCWD, path, f ? fileno(f) : -1, f ? 0 : e, mode_writes(mode));  \
    errno = e;                                                                             \
    return f;                                                                              \
  }
FREOPEN_WRAP(freopen)
FREOPEN_WRAP(freopen64)

#define STAT_WRAP(name, nofollow)                                                           \
  static int w_##name(const char *path, struct stat *st)                                  \
  {                                                                                        \
    int r = REAL(name, stat_fn)(path, st), e = errno;                                      \
    note_stat(#name, AT_FDCWD, path, st, r ? e : 0, nofollow);                             \
    errno = e;                                                                             \
    return r;                                                                              \
  }
STAT_WRAP(stat, false)
STAT_WRAP(stat64, false)
STAT_WRAP(lstat, true)
STAT_WRAP(lstat64, true)

#define XSTAT_WRAP(name, nofollow)                                                          \
  static int w_##name(int ver, const char *path, struct stat *st)                         \
  {                                                                                        \
    int r = REAL(name, xstat_fn)(ver, path, st), e = errno;                                \
    note_stat(#name, AT_FDCWD, path, st, r ? e : 0, nofollow);                             \
    errno = e;                                                                             \
    return r;                                                                              \
  }
XSTAT_WRAP(__xstat, false)
XSTAT_WRAP(__xstat64, false)
XSTAT_WRAP(__lxstat, true)
XSTAT_WRAP(__lxstat64, true)

#define FSTATAT_WRAP(name)                                                                  \
  static int w_##name(int dirfd, const char *path, struct stat *st, int flag)             \
  {                                                                                        \
    int r = REAL(name, fstatat_fn)(dirfd, path, st, flag), e = errno;                      \
    if (!(flag & AT_EMPTY_PATH) || (path && path[0]))                                      \
      note_stat(#name, dirfd, path, st, r ? e : 0, (flag & AT_SYMLINK_NOFOLLOW) != 0);     \
    errno = e;                                                                             \
    return r;                                                                              \
  }
FSTATAT_WRAP(fstatat)
FSTATAT_WRAP(fstatat64)

#define FXSTATAT_WRAP(name)                                                                 \
  static int w_##name(int ver, int dirfd, const char *path, struct stat *st, int flag)    \
  {                                                                                        \
    int r = REAL(name, fxstatat_fn)(ver, dirfd, path, st, flag), e = errno;                \
    if (!(flag & AT_EMPTY_PATH) || (path && path[0]))                                      \
      note_stat(#name, dirfd, path, st, r ? e : 0, (flag & AT_SYMLINK_NOFOLLOW) != 0);     \
    errno = e;                                                                             \
    return r;                                                                              \
  }
FXSTATAT_WRAP(__fxstatat)
FXSTATAT_WRAP(__fxstatat64)

static int w_statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *sx)
{
  int r = REAL(statx, statx_fn)(dirfd, path, flags, mask, sx), e = errno;
  if (!(flags & AT_EMPTY_PATH) || (path && path[0])) {
    struct stat st = {0};
    if (r == 0) {
      st.st_mode = sx->stx_mode;
      st.st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
      st.st_ino = sx->stx_ino;
      st.st_size = (off_t)sx->stx_size;
      st.st_mtim.tv_sec = sx->stx_mtime.tv_sec;
      st.st_mtim.tv_nsec = sx->stx_mtime.tv_nsec;
      st.st_ctim.tv_sec = sx->stx_ctime.tv_sec;
      st.st_ctim.tv_nsec = sx->stx_ctime.tv_nsec;
    }
    note_stat("statx", dirfd, path, &st, r ? e : 0, (flags & AT_SYMLINK_NOFOLLOW) != 0);
  }
  errno = e;
  return r;
}

#define ACCESS_WRAP(name)                                                                   \
  static int w_##name(const char *path, int mode)                                         \
  {                                                                                        \
    int r = REAL(name, access_fn)(path, mode), e = errno;                                  \
    note_path(#name, AT_FDCWD, path, r ? e : 0);                                           \
    errno = e;                                                                             \
    return r;                                                                              \
  }
ACCESS_WRAP(access)
ACCESS_WRAP(euidaccess)
ACCESS_WRAP(eaccess)

static int w_faccessat(int dirfd, const char *path, int mode, int flags)
{
  int r = REAL(faccessat, faccessat_fn)(dirfd, path, mode, flags), e = errno;
  note_path("faccessat", dirfd, path, r ? e : 0);
  errno = e;
  return r;
}

/* A symbolic link's target is a dependency no stat replays: NVRTC reading one during a compile
 * makes the compile unobservable, unless it is no link at all (EINVAL, ENOENT: a plain probe). */
static ssize_t w_readlink(const char *path, char *buf, size_t size)
{
  ssize_t r = REAL(readlink, readlink_fn)(path, buf, size);
  int e = errno;
  if (r >= 0)
    note_unobservable("read a symbolic link");
  else if (e == EINVAL)
    note_path("readlink", AT_FDCWD, path, 0);
  else
    note_path("readlink", AT_FDCWD, path, e);
  errno = e;
  return r;
}

static ssize_t w_readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
  ssize_t r = REAL(readlinkat, readlinkat_fn)(dirfd, path, buf, size);
  int e = errno;
  if (r >= 0)
    note_unobservable("read a symbolic link");
  else
    note_path("readlinkat", dirfd, path, e == EINVAL ? 0 : e);
  errno = e;
  return r;
}

/* realpath's answer depends on every symbolic link on the way: a resolved path NVRTC goes on to
 * use is the same as the probe of the path itself only while no link moves. */
static char *w_realpath(const char *path, char *resolved)
{
  char *r = REAL(realpath, realpath_fn)(path, resolved);
  int e = errno;
  if (__atomic_load_n(&active, __ATOMIC_ACQUIRE)) {
    struct stat st;
    if (r && lstat(path, &st) == 0 && !S_ISLNK(st.st_mode) && strcmp(r, path) == 0)
      note_path("realpath", AT_FDCWD, path, 0);
    else if (r)
      note_unobservable("resolved a path through symbolic links or '..' (realpath)");
    else
      note_path("realpath", AT_FDCWD, path, e);
  }
  errno = e;
  return r;
}

/* A listing is kept as a probe marked listed: whether it can be a dependency depends on whose
 * directory it is (NVRTC lists gpujit's own PCH directory), which the record's maker decides. */
static DIR *w_opendir(const char *path)
{
  DIR *d = REAL(opendir, opendir_fn)(path);
  int e = errno;
  if (d && __atomic_load_n(&active, __ATOMIC_ACQUIRE)) {
    gpujit__observed *o;
    struct stat st;
    pthread_mutex_lock(&note_lock);
    if ((o = active) != NULL && path && stat(path, &st) == 0) {
      gpujit__probe p = {.listed = true};
      fill_stat(&p, &st);
      add(o, &p, path);
    }
    pthread_mutex_unlock(&note_lock);
  } else if (!d)
    note_path("opendir", AT_FDCWD, path, e);
  errno = e;
  return d;
}

#define SCANDIR_WRAP(name)                                                                  \
  static int w_##name(const char *path, struct dirent ***list, int (*sel)(const struct dirent *), \
                      int (*cmp)(const struct dirent **, const struct dirent **))          \
  {                                                                                        \
    int r = REAL(name, scandir_fn)(path, list, sel, cmp), e = errno;                       \
    note_unobservable("listed a directory");                                               \
    errno = e;                                                                             \
    return r;                                                                              \
  }
SCANDIR_WRAP(scandir)
SCANDIR_WRAP(scandir64)

static int w_chdir(const char *path)
{
  note_unobservable("changed the working directory");
  return REAL(chdir, chdir_fn)(path);
}

static int w_fchdir(int fd)
{
  note_unobservable("changed the working directory");
  return REAL(fchdir, fchdir_fn)(fd);
}

static int w_system(const char *cmd)
{
  note_unobservable("ran a program");
  return REAL(system, system_fn)(cmd);
}

static FILE *w_popen(const char *cmd, const char *mode)
{
  note_unobservable("ran a program");
  return REAL(popen, popen_fn)(cmd, mode);
}

static int w_execv(const char *path, char *const argv[])
{
  note_unobservable("ran a program");
  return REAL(execv, execv_fn)(path, argv);
}

static int w_execvp(const char *file, char *const argv[])
{
  note_unobservable("ran a program");
  return REAL(execvp, execv_fn)(file, argv);
}

static int w_execve(const char *path, char *const argv[], char *const envp[])
{
  note_unobservable("ran a program");
  return REAL(execve, execve_fn)(path, argv, envp);
}

/* syscall(2): every argument is a register-sized integer on the architectures this runs on. A
 * system call that names a path is one no probe replays. */
static long w_syscall(long number, ...)
{
  long a[6];
  va_list ap;
  va_start(ap, number);
  for (int i = 0; i < 6; i++)
    a[i] = va_arg(ap, long);
  va_end(ap);
  switch (number) {
#ifdef SYS_open
  case SYS_open:
#endif
#ifdef SYS_stat
  case SYS_stat:
#endif
#ifdef SYS_lstat
  case SYS_lstat:
#endif
#ifdef SYS_access
  case SYS_access:
#endif
#ifdef SYS_readlink
  case SYS_readlink:
#endif
#ifdef SYS_getdents
  case SYS_getdents:
#endif
#ifdef SYS_openat2
  case SYS_openat2:
#endif
  case SYS_openat:
  case SYS_newfstatat:
  case SYS_statx:
  case SYS_faccessat:
  case SYS_readlinkat:
  case SYS_getdents64:
  case SYS_chdir:
  case SYS_execve:
    note_unobservable("made a file system call directly");
    break;
  default: break;
  }
  return REAL(syscall, syscall_fn)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static const struct {
  const char *name;
  void *wrapper;
  size_t slot; /* offset in `real` */
} table[] = {
#define GPUJIT__ROW(name) {#name, (void *)w_##name, offsetof(__typeof__(real), name)},
    GPUJIT__OBSERVED_FUNCS(GPUJIT__ROW)
#undef GPUJIT__ROW
};

/* ---- rebinding NVRTC's GOT ---- */

#if defined(__x86_64__)
#define JUMP_SLOT R_X86_64_JUMP_SLOT
#define GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define JUMP_SLOT R_AARCH64_JUMP_SLOT
#define GLOB_DAT R_AARCH64_GLOB_DAT
#endif

/* Functions that read the file system by path, imported under a name with no wrapper above:
 * observing NVRTC is not possible while it may call one. */
static const char *const unwrapped[] = {"openat2", "name_to_handle_at", "glob", "glob64", "nftw", "nftw64", "ftw",
                                        "ftw64", "fts_open", "posix_spawn", "posix_spawnp", "execl", "execlp",
                                        "execle", "execvpe", "fexecve", "statvfs", "canonicalize_file_name"};

struct relro {
  uintptr_t base, start, end;
};

static int find_relro(struct dl_phdr_info *info, size_t size, void *payload)
{
  struct relro *r = payload;
  (void)size;
  if ((uintptr_t)info->dlpi_addr != r->base)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
      r->start = r->base + info->dlpi_phdr[i].p_vaddr;
      r->end = r->start + info->dlpi_phdr[i].p_memsz;
    }
  return 1;
}

/* Write `value` into the slot at `where`, opening a read-only (RELRO) page for the write. */
static int write_slot(void **where, void *value, const struct relro *relro)
{
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t at = (uintptr_t)where & ~(uintptr_t)(page - 1);
  bool ro = (uintptr_t)where >= relro->start && (uintptr_t)where < relro->end;
  if (ro && mprotect((void *)at, (size_t)page, PROT_READ | PROT_WRITE) != 0)
    return -1;
  __atomic_store_n(where, value, __ATOMIC_RELEASE);
  if (ro)
    mprotect((void *)at, (size_t)page, PROT_READ);
  return 0;
}

static uintptr_t dyn_ptr(uintptr_t base, uintptr_t p) { return p < base ? base + p : p; }

/* Rebind every JUMP_SLOT and GLOB_DAT relocation of the wrapped names in `lm`. */
static void rebind(struct link_map *lm)
{
#if defined(JUMP_SLOT)
  uintptr_t base = (uintptr_t)lm->l_addr;
  const ElfW(Sym) *symtab = NULL;
  const char *strtab = NULL;
  const ElfW(Rela) *rel[2] = {NULL, NULL};
  size_t relsz[2] = {0, 0};
  struct relro relro = {.base = base};

  for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++)
    switch (d->d_tag) {
    case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(base, d->d_un.d_ptr); break;
    case DT_STRTAB: strtab = (const char *)dyn_ptr(base, d->d_un.d_ptr); break;
    case DT_JMPREL: rel[0] = (const ElfW(Rela) *)dyn_ptr(base, d->d_un.d_ptr); break;
    case DT_PLTRELSZ: relsz[0] = d->d_un.d_val; break;
    case DT_RELA: rel[1] = (const ElfW(Rela) *)dyn_ptr(base, d->d_un.d_ptr); break;
    case DT_RELASZ: relsz[1] = d->d_un.d_val; break;
    case DT_PLTREL:
      if (d->d_un.d_val != DT_RELA) {
        snprintf(unavailable, sizeof(unavailable), "NVRTC's relocations are not of the RELA kind");
        return;
      }
      break;
    default: break;
    }
  if (!symtab || !strtab) {
    snprintf(unavailable, sizeof(unavailable), "NVRTC has no dynamic symbol table");
    return;
  }
  dl_iterate_phdr(find_relro, &relro);
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; rel[t] && i < relsz[t] / sizeof(ElfW(Rela)); i++) {
      const ElfW(Rela) *r = &rel[t][i];
      unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
      size_t sym = (size_t)ELF64_R_SYM(r->r_info);
      const char *name;
      if ((type != JUMP_SLOT && type != GLOB_DAT) || sym == 0)
        continue;
      name = strtab + symtab[sym].st_name;
      for (size_t k = 0; k < sizeof(unwrapped) / sizeof(unwrapped[0]); k++)
        if (strcmp(name, unwrapped[k]) == 0) {
          snprintf(unavailable, sizeof(unavailable), "NVRTC imports %s, which gpujit cannot observe", name);
          return;
        }
      for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
        void **slot, **keep;
        if (strcmp(name, table[k].name) != 0)
          continue;
        slot = (void **)(base + r->r_offset);
        keep = (void **)((char *)&real + table[k].slot);
        /* what the slot held is what NVRTC called (libc's, or an interposer's); a slot not yet
         * bound (lazy binding) holds a stub inside NVRTC: ask the dynamic linker instead */
        if (!*keep) {
          void *now = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
          Dl_info in;
          if (now == table[k].wrapper)
            break;
          if (dladdr(now, &in) && (uintptr_t)in.dli_fbase == base)
            now = dlsym(RTLD_DEFAULT, name);
          *keep = now;
        }
        if (!*keep || write_slot(slot, table[k].wrapper, &relro) != 0) {
          snprintf(unavailable, sizeof(unavailable), "NVRTC's import of %s could not be rebound: %s", name,
                   *keep ? strerror(errno) : "not found");
          return;
        }
        break;
      }
    }
  unavailable[0] = '\0';
#else
  (void)lm;
  snprintf(unavailable, sizeof(unavailable), "observing NVRTC is not implemented for this architecture");
#endif
}

void gpujit__observe_install(void *handle)
{
  struct link_map *lm = NULL;
  const char *off = getenv("GPUJIT_OBSERVE");
  if (off && strcmp(off, "0") == 0) { /* benchmarks: the cost of observing, side by side */
    snprintf(unavailable, sizeof(unavailable), "GPUJIT_OBSERVE=0 turned observing off");
    return;
  }
  if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
    snprintf(unavailable, sizeof(unavailable), "NVRTC's link map could not be read");
    return;
  }
  rebind(lm);
}

/* ---- observed compiles ---- */

void gpujit__observe_begin(gpujit__observed *o)
{
  pthread_mutex_lock(&serial);
  pthread_mutex_lock(&note_lock);
  __atomic_store_n(&active, o, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&note_lock);
}

void gpujit__observe_end(gpujit__observed *o)
{
  pthread_mutex_lock(&note_lock);
  if (active == o)
    __atomic_store_n(&active, NULL, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&note_lock);
  pthread_mutex_unlock(&serial);
}

int gpujit__observed_merge(gpujit__observed *to, const gpujit__observed *from)
{
  for (size_t i = 0; i < from->count; i++)
    add(to, &from->items[i], from->items[i].path);
  if (from->why[0])
    set_why(to, "%s", from->why);
  return to->why[0] && strstr(to->why, "out of memory") ? GPUJIT_ENOMEM : 0;
}

int gpujit__observed_copy(gpujit__observed *to, const gpujit__observed *from)
{
  memset(to, 0, sizeof(*to));
  return gpujit__observed_merge(to, from);
}

bool gpujit__observed_holds(const gpujit__observed *o, char *why, size_t why_size)
{
  for (size_t i = 0; i < o->count; i++) {
    const gpujit__probe *p = &o->items[i];
    struct stat st;
    gpujit__probe now = {0};
    if (p->written)
      continue;
    if (stat(p->path, &st) != 0)
      now.kind = GPUJIT__PROBE_ABSENT;
    else
      fill_stat(&now, &st);
    if (now.kind != p->kind || (p->kind == GPUJIT__PROBE_FILE &&
                                (now.ino != p->ino || now.dev != p->dev || now.size != p->size ||
                                 now.mtime_ns != p->mtime_ns || now.ctime_ns != p->ctime_ns))) {
      snprintf(why, why_size, "%s is %s now", p->path,
               now.kind != p->kind ? kind_name(now.kind) : "another file");
      return false;
    }
  }
  return true;
}

void gpujit__observed_free(gpujit__observed *o)
{
  for (size_t i = 0; i < o->count; i++)
    free(o->items[i].path);
  free(o->items);
  if (o->index)
    free(o->index->slots);
  free(o->index);
  o->items = NULL;
  o->index = NULL;
  o->count = o->cap = 0;
  o->why[0] = '\0';
}
