/* The record's side of the observing wrappers (compile/observe/observe_got.c → compile/observe/observe.c): each
 * notes one probe NVRTC made into the compile being observed, if any. */
#ifndef GPUJIT_COMPILE_OBSERVE_NOTE_H
#define GPUJIT_COMPILE_OBSERVE_NOTE_H

#include <stdbool.h>
#include <sys/stat.h>

/** Whether a compile is being observed now (a cheap first test for the wrappers). */
bool gpujit__observe_active(void);
/** A stat-like probe of `path` (relative to `dirfd` as the *at functions take it): its answer `st`,
 *  or `err` (0: success). `nofollow`: an lstat. */
void gpujit__observe_note_stat(const char *fn, int dirfd, const char *path, const struct stat *st, int err,
                               bool nofollow);
/** A probe answered by stat'ing `path` here (access, a failed opendir): `err` is the call's errno (0: it
 *  succeeded). */
void gpujit__observe_note_path(const char *fn, int dirfd, const char *path, int err);
/** An open: `fd` (or `err`); `writes`: opened to write, NVRTC's own output. */
/** Whether a read of `path` must not be let through: while a compile is observed, a FIFO,
 *  socket or block device, or a character device outside /dev/, which NVRTC would wait on (it
 *  is noted in the record's `refused`; the wrapper fails the open with ENXIO). */
bool gpujit__observe_refuse(int dirfd, const char *path);
void gpujit__observe_note_open(const char *fn, int dirfd, const char *path, int fd, int err, bool writes);
/** A directory NVRTC listed. */
void gpujit__observe_note_listed(const char *path);
/** A call no probe can replay (`what`, as "NVRTC <what> during the compile"); `reads_lost`: after
 *  it, or through it, files may be read that no probe names (a changed working directory, a
 *  program run). */
void gpujit__observe_note_unobservable(const char *what, bool reads_lost);

#endif
