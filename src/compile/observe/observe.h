/* What a compile looked at, observed rather than predicted: every path the NVRTC library that
 * gpujit loaded stat'ed, opened or probed during a compile, with what it found. The file
 * functions NVRTC imports from libc are rebound in NVRTC's own relocation table (its GOT), so
 * the host program's file activity is neither seen nor changed, and a library NVRTC does not
 * import through a rebound slot is never touched. */
#ifndef GPUJIT_COMPILE_OBSERVE_OBSERVE_H
#define GPUJIT_COMPILE_OBSERVE_OBSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** What one probe found. */
typedef enum gpujit__probe_kind {
  GPUJIT__PROBE_FILE,   /* a regular file (stat'ed or opened for reading) */
  GPUJIT__PROBE_ABSENT, /* no such file (ENOENT, ENOTDIR) */
  GPUJIT__PROBE_OTHER,  /* exists, but no regular file (a directory, a device) */
  GPUJIT__PROBE_ERROR,  /* the call failed with `err` (EACCES, ELOOP, ENAMETOOLONG, …): an answer a
                           lookup replays like an absence */
} gpujit__probe_kind;

typedef struct gpujit__probe {
  char *path; /* exactly as NVRTC named it: absolute, or relative to the working directory */
  gpujit__probe_kind kind;
  bool read;  /* opened for reading (its content is a dependency), not only stat'ed */
  bool listed; /* a directory NVRTC listed: its entries are a dependency no probe replays */
  bool library; /* a shared library NVRTC mapped (its builtins): a dependency, never copied */
  int err;      /* GPUJIT__PROBE_ERROR: the errno */
  uint32_t programs; /* the separately compiled sources (an LTO module's) whose compiles made it:
                        bit i for source i (mod 32); 0 where they are not told apart */
  bool written; /* NVRTC opened it for writing (a PCH, a temporary file): its own output, which
                   every other probe of the path is about, so none of them is a dependency */
  /* a file's identity when NVRTC first looked: a later look that differs means it changed
   * during the compile */
  uint64_t dev, ino, size;
  int64_t mtime_ns, ctime_ns;
  /* when NVRTC first looked (CLOCK_REALTIME_COARSE, the clock file times come from): a file
   * stamped in that tick or later may change again unseen by its stat (too new to record) */
  int64_t seen_ns;
} gpujit__probe;

/** An environment variable NVRTC read (getenv, secure_getenv), with what it found. */
typedef struct gpujit__env_read {
  char *name;
  char *value; /* NULL: not set */
} gpujit__env_read;

/** The probes of one compile (or of several, merged), in the order NVRTC first made them. */
typedef struct gpujit__observed {
  gpujit__probe *items;
  size_t count, cap;
  gpujit__env_read *env; /* in first-read order, each name once */
  size_t env_count, env_cap;
  /* while observed: the compiles being observed in the process, and this one's number, which a
   * thread NVRTC started for it carries (observe.c) */
  struct gpujit__observed *live_next;
  uint64_t live_id;
  struct gpujit__observed_index *index; /* path -> item, while recording */
  char why[512]; /* non-empty: what was seen cannot be a dependency record (and why) */
  bool reads_lost; /* what NVRTC read may not all be among the probes (out of memory, a path it
                      named that cannot be said, a changed working directory): the lean pass,
                      which reads the user's headers, keeps every variable. Nothing else in
                      `why` says that: a record refused for it still names every file read */
  char refused[600]; /* non-empty: a FIFO, socket or device NVRTC went to read, which it was
                        not let open (it would wait on it for ever): the build fails, naming it */
} gpujit__observed;

/**
 * Rebind the file functions of the NVRTC library at `handle` (a dlopen handle) to observing
 * wrappers. Called once, when NVRTC is loaded; the outcome is kept for
 * gpujit__observe_unavailable().
 */
void gpujit__observe_install(void *handle);
/** Why compiles cannot be observed in this process (NVRTC not loaded through dlopen by gpujit,
 *  an import that reads files and is not rebound, another architecture), or NULL when they can. */
const char *gpujit__observe_unavailable(void);

/**
 * Rebind nvJitLink's environment reads (getenv, secure_getenv) and pthread_create at `handle` to
 * observing wrappers: a link observed with gpujit__observe_begin() records each variable it
 * reads. Called once, when nvJitLink is loaded.
 */
void gpujit__observe_install_link(void *handle);
/** Why links cannot be observed (as gpujit__observe_unavailable()), or NULL when they can. */
const char *gpujit__observe_link_unavailable(void);
/** Add to `o`, after its link, what every link of the process depends on: the variables
 *  nvJitLink read when it was loaded, and those links read in this process before. */
void gpujit__observe_add_link_process(gpujit__observed *o);

/** Start recording into `o` what NVRTC reads on the calling thread (and on the threads NVRTC
 *  starts from it) until gpujit__observe_end. Compiles on other threads — gpujit's own, or the
 *  host program's through the same NVRTC — are observed apart, or not at all: never into `o`,
 *  and never held back by it. */
void gpujit__observe_begin(gpujit__observed *o);
/** Stop recording. */
void gpujit__observe_end(gpujit__observed *o);
/** Before a compile: note the objects the process has mapped, so that those its compile maps
 *  (NVRTC's builtins, on its first compile) are known as NVRTC's. */
void gpujit__observe_libs_mark(void);
/** Add to `o`, after its compile, what every compile of the process depends on: the libraries
 *  NVRTC has mapped and the variables it read when it was loaded. */
void gpujit__observe_add_process(gpujit__observed *o);
/** Whether `name` is a variable whose value cannot change what NVRTC produces, though it reads it
 *  (PWD: its paths come from getcwd, which the record's paths already follow). */
bool gpujit__observe_env_ignored(const char *name);

/** Add every probe of `from` that `to` lacks (a compile that used a PCH inherits the probes of
 *  the compile that made it); a reason in `from` carries over. @return 0 or GPUJIT_ENOMEM. */
int gpujit__observed_merge(gpujit__observed *to, const gpujit__observed *from);
/** Take `path` out of what `o` depends on (a PCH does not depend on the source that made it). */
void gpujit__observed_forget(gpujit__observed *o, const char *path);
/** Copy `from` into a fresh `to`. @return 0 or GPUJIT_ENOMEM. */
int gpujit__observed_copy(gpujit__observed *to, const gpujit__observed *from);
/**
 * Whether every probe still gives the answer it gave (a file: the same identity, size, mtime and
 * ctime). @param why set to the first that does not. Used for PCHs: one is reused only while the
 * compile that made it would look at the same files.
 */
bool gpujit__observed_holds(const gpujit__observed *o, char *why, size_t why_size);
void gpujit__observed_free(gpujit__observed *o);

#endif
