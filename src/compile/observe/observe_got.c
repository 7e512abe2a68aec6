/* What NVRTC looked at during a compile, seen through its own imports. NVRTC resolves every
 * #include and __has_include by calling libc in the compiling process: stat() and open() on
 * each candidate in search order, the missing ones failing with ENOENT. Its GOT slots for those
 * functions are rebound here to wrappers that call the function NVRTC would have called and note
 * the path and the answer (observe.c) while a compile is being observed; outside one they only
 * forward. No other object's slots change, so the host program's own file activity is not seen. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "compile/observe/observe.h"
#include "compile/observe/observe_note.h"

static char unavailable[512] = "NVRTC was not loaded by gpujit";

const char *gpujit__observe_unavailable(void) { return unavailable[0] ? unavailable : NULL; }

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

/* What every wrapper does after its call: note the answer, give the caller the call's errno.
 * Each is entered with errno as the real call left it (the call is the last argument). */
static int open_done(const char *fn, int dirfd, const char *path, bool writes, int fd)
{
  int e = errno;
  gpujit__observe_note_open(fn, dirfd, path, fd, fd < 0 ? e : 0, writes);
  errno = e;
  return fd;
}

static FILE *fopen_done(const char *fn, const char *path, const char *mode, FILE *f)
{
  int e = errno;
  if (path) /* freopen(NULL, ...) changes a stream's mode: no path looked at */
    gpujit__observe_note_open(fn, AT_FDCWD, path, f ? fileno(f) : -1, f ? 0 : e, mode_writes(mode));
  errno = e;
  return f;
}

/* `flag`: fstatat's; AT_EMPTY_PATH with an empty path is an fstat, of no path. */
static int stat_done(const char *fn, int dirfd, const char *path, struct stat *st, int flag, int r)
{
  int e = errno;
  if (!(flag & AT_EMPTY_PATH) || (path && path[0]))
    gpujit__observe_note_stat(fn, dirfd, path, st, r ? e : 0, (flag & AT_SYMLINK_NOFOLLOW) != 0);
  errno = e;
  return r;
}

static int path_done(const char *fn, int dirfd, const char *path, int r)
{
  int e = errno;
  gpujit__observe_note_path(fn, dirfd, path, r ? e : 0);
  errno = e;
  return r;
}

/* A read of a path the observer refuses (a FIFO or device as a header: NVRTC would block on it). */
static bool refused(int dirfd, const char *path, bool writes) { return !writes && gpujit__observe_refuse(dirfd, path); }

/* open's third argument, there only with O_CREAT or O_TMPFILE. */
#define MODE_ARG(mode, flags)                                                               \
  if ((flags) & (O_CREAT | O_TMPFILE)) {                                                   \
    va_list ap;                                                                            \
    va_start(ap, flags);                                                                   \
    mode = (mode_t)va_arg(ap, int);                                                        \
    va_end(ap);                                                                            \
  }

#define OPEN_WRAP(name)                                                                     \
  static int w_##name(const char *path, int flags, ...)                                   \
  {                                                                                        \
    mode_t mode = 0;                                                                       \
    MODE_ARG(mode, flags)                                                                  \
    if (refused(AT_FDCWD, path, open_writes(flags)))                                       \
      return errno = ENXIO, -1;                                                            \
    return open_done(#name, AT_FDCWD, path, open_writes(flags), REAL(name, open_fn)(path, flags, mode)); \
  }
OPEN_WRAP(open)
OPEN_WRAP(open64)

#define OPEN2_WRAP(name)                                                                    \
  static int w_##name(const char *path, int flags)                                        \
  {                                                                                        \
    if (refused(AT_FDCWD, path, open_writes(flags)))                                       \
      return errno = ENXIO, -1;                                                            \
    return open_done(#name, AT_FDCWD, path, open_writes(flags), REAL(name, open2_fn)(path, flags)); \
  }
OPEN2_WRAP(__open_2)
OPEN2_WRAP(__open64_2)

#define OPENAT_WRAP(name)                                                                   \
  static int w_##name(int dirfd, const char *path, int flags, ...)                        \
  {                                                                                        \
    mode_t mode = 0;                                                                       \
    MODE_ARG(mode, flags)                                                                  \
    if (refused(dirfd, path, open_writes(flags)))                                          \
      return errno = ENXIO, -1;                                                            \
    return open_done(#name, dirfd, path, open_writes(flags), REAL(name, openat_fn)(dirfd, path, flags, mode)); \
  }
OPENAT_WRAP(openat)
OPENAT_WRAP(openat64)

#define OPENAT2_WRAP(name)                                                                  \
  static int w_##name(int dirfd, const char *path, int flags)                             \
  {                                                                                        \
    if (refused(dirfd, path, open_writes(flags)))                                          \
      return errno = ENXIO, -1;                                                            \
    return open_done(#name, dirfd, path, open_writes(flags), REAL(name, openat2_fn)(dirfd, path, flags)); \
  }
OPENAT2_WRAP(__openat_2)
OPENAT2_WRAP(__openat64_2)

#define FOPEN_WRAP(name)                                                                    \
  static FILE *w_##name(const char *path, const char *mode)                               \
  {                                                                                        \
    if (refused(AT_FDCWD, path, mode_writes(mode)))                                        \
      return errno = ENXIO, (FILE *)NULL;                                                  \
    return fopen_done(#name, path, mode, REAL(name, fopen_fn)(path, mode));                \
  }
FOPEN_WRAP(fopen)
FOPEN_WRAP(fopen64)

#define FREOPEN_WRAP(name)                                                                  \
  static FILE *w_##name(const char *path, const char *mode, FILE *stream)                 \
  {                                                                                        \
    return fopen_done(#name, path, mode, REAL(name, freopen_fn)(path, mode, stream));      \
  }
FREOPEN_WRAP(freopen)
FREOPEN_WRAP(freopen64)

#define STAT_WRAP(name, flag)                                                               \
  static int w_##name(const char *path, struct stat *st)                                  \
  {                                                                                        \
    return stat_done(#name, AT_FDCWD, path, st, flag, REAL(name, stat_fn)(path, st));      \
  }
STAT_WRAP(stat, 0)
STAT_WRAP(stat64, 0)
STAT_WRAP(lstat, AT_SYMLINK_NOFOLLOW)
STAT_WRAP(lstat64, AT_SYMLINK_NOFOLLOW)

#define XSTAT_WRAP(name, flag)                                                              \
  static int w_##name(int ver, const char *path, struct stat *st)                         \
  {                                                                                        \
    return stat_done(#name, AT_FDCWD, path, st, flag, REAL(name, xstat_fn)(ver, path, st)); \
  }
XSTAT_WRAP(__xstat, 0)
XSTAT_WRAP(__xstat64, 0)
XSTAT_WRAP(__lxstat, AT_SYMLINK_NOFOLLOW)
XSTAT_WRAP(__lxstat64, AT_SYMLINK_NOFOLLOW)

#define FSTATAT_WRAP(name)                                                                  \
  static int w_##name(int dirfd, const char *path, struct stat *st, int flag)             \
  {                                                                                        \
    return stat_done(#name, dirfd, path, st, flag, REAL(name, fstatat_fn)(dirfd, path, st, flag)); \
  }
FSTATAT_WRAP(fstatat)
FSTATAT_WRAP(fstatat64)

#define FXSTATAT_WRAP(name)                                                                 \
  static int w_##name(int ver, int dirfd, const char *path, struct stat *st, int flag)    \
  {                                                                                        \
    return stat_done(#name, dirfd, path, st, flag, REAL(name, fxstatat_fn)(ver, dirfd, path, st, flag)); \
  }
FXSTATAT_WRAP(__fxstatat)
FXSTATAT_WRAP(__fxstatat64)

static int w_statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *sx)
{
  int r = REAL(statx, statx_fn)(dirfd, path, flags, mask, sx);
  struct stat st = {0}; /* what the record keeps, as a stat gives it (no call: errno stays) */
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
  return stat_done("statx", dirfd, path, &st, flags, r);
}

#define ACCESS_WRAP(name)                                                                   \
  static int w_##name(const char *path, int mode)                                         \
  {                                                                                        \
    return path_done(#name, AT_FDCWD, path, REAL(name, access_fn)(path, mode));            \
  }
ACCESS_WRAP(access)
ACCESS_WRAP(euidaccess)
ACCESS_WRAP(eaccess)

static int w_faccessat(int dirfd, const char *path, int mode, int flags)
{
  return path_done("faccessat", dirfd, path, REAL(faccessat, faccessat_fn)(dirfd, path, mode, flags));
}

/* A symbolic link's target is a dependency no stat replays: NVRTC reading one during a compile
 * makes the compile unobservable, unless it is no link at all (EINVAL, ENOENT: a plain probe). */
static ssize_t w_readlink(const char *path, char *buf, size_t size)
{
  ssize_t r = REAL(readlink, readlink_fn)(path, buf, size);
  int e = errno;
  if (r >= 0)
    gpujit__observe_note_unobservable("read a symbolic link", false);
  else if (e == EINVAL)
    gpujit__observe_note_path("readlink", AT_FDCWD, path, 0);
  else
    gpujit__observe_note_path("readlink", AT_FDCWD, path, e);
  errno = e;
  return r;
}

static ssize_t w_readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
  ssize_t r = REAL(readlinkat, readlinkat_fn)(dirfd, path, buf, size);
  int e = errno;
  if (r >= 0)
    gpujit__observe_note_unobservable("read a symbolic link", false);
  else
    gpujit__observe_note_path("readlinkat", dirfd, path, e == EINVAL ? 0 : e);
  errno = e;
  return r;
}

/* realpath's answer depends on every symbolic link on the way: a resolved path NVRTC goes on to
 * use is the same as the probe of the path itself only while no link moves. */
static char *w_realpath(const char *path, char *resolved)
{
  char *r = REAL(realpath, realpath_fn)(path, resolved);
  int e = errno;
  if (gpujit__observe_active()) {
    struct stat st;
    if (r && lstat(path, &st) == 0 && !S_ISLNK(st.st_mode) && strcmp(r, path) == 0)
      gpujit__observe_note_path("realpath", AT_FDCWD, path, 0);
    else if (r)
      gpujit__observe_note_unobservable("resolved a path through symbolic links or '..' (realpath)", false);
    else
      gpujit__observe_note_path("realpath", AT_FDCWD, path, e);
  }
  errno = e;
  return r;
}

static DIR *w_opendir(const char *path)
{
  DIR *d = REAL(opendir, opendir_fn)(path);
  int e = errno;
  if (d)
    gpujit__observe_note_listed(path);
  else
    gpujit__observe_note_path("opendir", AT_FDCWD, path, e);
  errno = e;
  return d;
}

#define SCANDIR_WRAP(name)                                                                  \
  static int w_##name(const char *path, struct dirent ***list, int (*sel)(const struct dirent *), \
                      int (*cmp)(const struct dirent **, const struct dirent **))          \
  {                                                                                        \
    int r = REAL(name, scandir_fn)(path, list, sel, cmp), e = errno;                       \
    gpujit__observe_note_unobservable("listed a directory", false);                        \
    errno = e;                                                                             \
    return r;                                                                              \
  }
SCANDIR_WRAP(scandir)
SCANDIR_WRAP(scandir64)

static int w_chdir(const char *path)
{
  gpujit__observe_note_unobservable("changed the working directory", true);
  return REAL(chdir, chdir_fn)(path);
}

static int w_fchdir(int fd)
{
  gpujit__observe_note_unobservable("changed the working directory", true);
  return REAL(fchdir, fchdir_fn)(fd);
}

static int w_system(const char *cmd)
{
  gpujit__observe_note_unobservable("ran a program", true);
  return REAL(system, system_fn)(cmd);
}

static FILE *w_popen(const char *cmd, const char *mode)
{
  gpujit__observe_note_unobservable("ran a program", true);
  return REAL(popen, popen_fn)(cmd, mode);
}

static int w_execv(const char *path, char *const argv[])
{
  gpujit__observe_note_unobservable("ran a program", true);
  return REAL(execv, execv_fn)(path, argv);
}

static int w_execvp(const char *file, char *const argv[])
{
  gpujit__observe_note_unobservable("ran a program", true);
  return REAL(execvp, execv_fn)(file, argv);
}

static int w_execve(const char *path, char *const argv[], char *const envp[])
{
  gpujit__observe_note_unobservable("ran a program", true);
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
    gpujit__observe_note_unobservable("made a file system call directly", true); /* an open no probe names */
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

/* The rows rebound in one library: NVRTC's, this file's table followed by observe_proc.c's; or
 * nvJitLink's (`link`), its environment and threads only. Row k: its wrapper, and where what the
 * slot held is kept. */
#define TABLE_ROWS (sizeof(table) / sizeof(table[0]))
static size_t rows_of(bool link) { return link ? gpujit__observe_link_count : TABLE_ROWS + gpujit__observe_proc_count; }

static const gpujit__got_row *more(bool link, size_t k)
{
  return link ? &gpujit__observe_link_rows[k] : &gpujit__observe_proc_rows[k - TABLE_ROWS];
}

static void *row(bool link, size_t k, void ***keep)
{
  if (!link && k < TABLE_ROWS) {
    *keep = (void **)((char *)&real + table[k].slot);
    return table[k].wrapper;
  }
  *keep = more(link, k)->real;
  return more(link, k)->wrapper;
}

static const char *row_name(bool link, size_t k) { return !link && k < TABLE_ROWS ? table[k].name : more(link, k)->name; }

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

/* Rebind every JUMP_SLOT and GLOB_DAT relocation of the wrapped names in `lm` (nvJitLink's rows
 * where `link`); what stops it goes into `unavailable` (`problem`, 512 bytes), emptied when done. */
static void rebind(struct link_map *lm, bool link, char *problem)
{
  const char *who = link ? "nvJitLink" : "NVRTC";
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
        snprintf(problem, 512, "%s's relocations are not of the RELA kind", who);
        return;
      }
      break;
    default: break;
    }
  if (!symtab || !strtab) {
    snprintf(problem, 512, "%s has no dynamic symbol table", who);
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
      for (size_t k = 0; !link && k < sizeof(unwrapped) / sizeof(unwrapped[0]); k++)
        if (strcmp(name, unwrapped[k]) == 0) {
          snprintf(problem, 512, "NVRTC imports %s, which gpujit cannot observe", name);
          return;
        }
      for (size_t k = 0; k < rows_of(link); k++) {
        void **slot, **keep, *wrapper = row(link, k, &keep);
        if (strcmp(name, row_name(link, k)) != 0)
          continue;
        slot = (void **)(base + r->r_offset);
        /* what the slot held is what NVRTC called (libc's, or an interposer's); a slot not yet
         * bound (lazy binding) holds a stub inside NVRTC: ask the dynamic linker instead */
        if (!*keep) {
          void *now = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
          Dl_info in;
          if (now == wrapper)
            break;
          if (dladdr(now, &in) && (uintptr_t)in.dli_fbase == base)
            now = dlsym(RTLD_DEFAULT, name);
          *keep = now;
        }
        if (!*keep || write_slot(slot, wrapper, &relro) != 0) {
          snprintf(problem, 512, "%s's import of %s could not be rebound: %s", who, name,
                   *keep ? strerror(errno) : "not found");
          return;
        }
        break;
      }
    }
  problem[0] = '\0';
#else
  (void)lm;
  snprintf(problem, 512, "observing %s is not implemented for this architecture", who);
#endif
}

/* Rebind the imports of the library at `handle` (a dlopen handle): NVRTC's, or nvJitLink's rows
 * where `link`; why it could not be done into `problem` (512 bytes), emptied when done. */
void gpujit__observe_rebind(void *handle, bool link, char *problem)
{
  struct link_map *lm = NULL;
  const char *off = getenv("GPUJIT_BENCH_OBSERVE");
  if (off && strcmp(off, "0") == 0) /* benchmarks: the cost of observing, side by side */
    snprintf(problem, 512, "GPUJIT_BENCH_OBSERVE=0 turned observing off");
  else if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
    snprintf(problem, 512, "%s's link map could not be read", link ? "nvJitLink" : "NVRTC");
  else
    rebind(lm, link, problem);
}

void gpujit__observe_install(void *handle)
{
  gpujit__observe_rebind(handle, false, unavailable);
  if (!unavailable[0])
    gpujit__observe_proc_loaded();
}
