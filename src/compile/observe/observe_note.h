/* The record's side of the observing wrappers (compile/observe/observe_got.c → compile/observe/observe.c): each
 * notes one probe NVRTC made into the compile being observed, if any. */
#ifndef GPUJIT_COMPILE_OBSERVE_OBSERVE_NOTE_H
#define GPUJIT_COMPILE_OBSERVE_OBSERVE_NOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct gpujit__observed;

/** Whether a compile is being observed now (a cheap first test for the wrappers). */
bool gpujit__observe_active(void);
/** A stat-like probe of `path` (relative to `dirfd` as the *at functions take it): its answer `st`,
 *  or `err` (0: success). `nofollow`: an lstat. */
void gpujit__observe_note_stat(const char *fn, int dirfd, const char *path, const struct stat *st, int err,
                               bool nofollow);
/** A probe answered by stat'ing `path` here (access, a failed opendir): `err` is the call's errno (0: it
 *  succeeded). */
void gpujit__observe_note_path(const char *fn, int dirfd, const char *path, int err);
/** Whether a read of `path` must not be let through: while a compile is observed, a FIFO,
 *  socket or block device, or a character device outside /dev/, which NVRTC would wait on (it
 *  is noted in the record's `refused`; the wrapper fails the open with ENXIO). */
bool gpujit__observe_refuse(int dirfd, const char *path);
/** An open: `fd` (or `err`); `writes`: opened to write, NVRTC's own output. */
void gpujit__observe_note_open(const char *fn, int dirfd, const char *path, int fd, int err, bool writes);
/** An environment variable NVRTC read (`value` NULL: not set). */
void gpujit__observe_note_env(const char *name, const char *value);
/** Whether a failure with `err` is an answer a lookup can replay (permissions, link loops, names
 *  too long), rather than the moment's state (no descriptors, an I/O error). */
bool gpujit__observe_err_replayable(int err);
/** Add a variable's value as read: the first read of a name stands; another value later makes
 *  the record unfit where `strict` (the same compile read it twice). */
void gpujit__observed_env_add(struct gpujit__observed *o, const char *name, const char *value, bool strict);
/** Add a shared library NVRTC mapped, as a file read. */
void gpujit__observed_library_add(struct gpujit__observed *o, const char *path);
/** Threads NVRTC starts: who started them (the creating thread's compile and its number) is
 *  taken before, and given to the new thread in it. */
void gpujit__observe_thread_creator(struct gpujit__observed **creator, uint64_t *id);
void gpujit__observe_thread_started(struct gpujit__observed *creator, uint64_t id);

/** One more import of NVRTC's rebound to a wrapper (observe_proc.c's, beside observe_got.c's). */
typedef struct gpujit__got_row {
  const char *name;
  void *wrapper;
  void **real; /* what the slot held */
} gpujit__got_row;
extern const gpujit__got_row gpujit__observe_proc_rows[];
extern const size_t gpujit__observe_proc_count;
/** Snapshot what NVRTC read while it was loaded (called once it is, before any compile). */
void gpujit__observe_proc_loaded(void);
/** nvJitLink's imports rebound (its environment and threads only), and its snapshot. */
extern const gpujit__got_row gpujit__observe_link_rows[];
extern const size_t gpujit__observe_link_count;
/** Rebind the imports of the library at `handle` (dlopen's): NVRTC's, or nvJitLink's rows where
 *  `link`; why it could not into `problem` (512 bytes), emptied when it could. */
void gpujit__observe_rebind(void *handle, bool link, char *problem);
/** Snapshot what nvJitLink read while it was loaded (called once its imports are rebound). */
void gpujit__observe_link_loaded(void);

/** A directory NVRTC listed. */
void gpujit__observe_note_listed(const char *path);
/** A call no probe can replay (`what`, as "NVRTC <what> during the compile"); `reads_lost`: after
 *  it, or through it, files may be read that no probe names (a changed working directory, a
 *  program run). */
void gpujit__observe_note_unobservable(const char *what, bool reads_lost);

#endif
