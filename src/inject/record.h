/* The injection library's records (libgpujit_inject.so, loaded into the profiled program by
 * `gpujit profile`): one file of JSON lines per process in $GPUJIT_PROFILE_DIR, each line written
 * whole with one write(2) (or many whole lines together, in a batch), so a crash or a kill loses
 * no line that was written and never leaves half of one (a partial last line is dropped by the
 * reader). This folder uses nothing else of gpujit: it lives in other people's processes. */
#ifndef GPUJIT_INJECT_RECORD_H
#define GPUJIT_INJECT_RECORD_H

#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GJI_HIDDEN __attribute__((visibility("hidden")))

/** A line being built: fixed storage, text past the end is cut (and the line marked cut). */
typedef struct gji_line {
  char buf[8192];
  size_t len;
  bool cut, first;
} gji_line;

/** Whether a profile is being recorded in this process ($GPUJIT_PROFILE_DIR set and writable). */
GJI_HIDDEN bool gji_active(void);
/** The options of the profile run ($GPUJIT_PROFILE_FLAGS): lineinfo, nvrtc-trace. */
GJI_HIDDEN bool gji_flag(const char *name);
/** A setting of the profile (a GPUJIT_RECORD_ENV_* id): what an in-process session was given,
 *  else the environment's variable (settings.c). */
GJI_HIDDEN const char *gji_setting(int id);
/** An in-process session's settings (indexed by GPUJIT_RECORD_ENV_*, NULL: not given), standing
 *  for the environment from now on (settings.c). */
GJI_HIDDEN void gji_settings_give(const char *const *settings);
/** An in-process session begins: records go to a new file in `dir`, with the flags `words`. */
GJI_HIDDEN void gji_inproc_begin(const char *dir, const char *words);
/** It ends: nothing more is recorded (the wrappers forward only). */
GJI_HIDDEN void gji_inproc_end(void);
/** The directory records go to. */
GJI_HIDDEN const char *gji_dir(void);

/** Nanoseconds, CLOCK_REALTIME (the clock every record's host times are on). */
GJI_HIDDEN uint64_t gji_now(void);
/** This thread's id (gettid). */
GJI_HIDDEN uint32_t gji_tid(void);

/** Start a record of kind `k` ({"k":K,"pid":…,"tid":…). */
GJI_HIDDEN void gji_begin(gji_line *l, const char *k);
/** The same, for something thread `tid` did (a launch CUPTI reports later, on its own thread). */
GJI_HIDDEN void gji_begin_on(gji_line *l, const char *k, uint32_t tid);
GJI_HIDDEN void gji_str(gji_line *l, const char *key, const char *value);
GJI_HIDDEN void gji_strn(gji_line *l, const char *key, const char *value, size_t n);
GJI_HIDDEN void gji_u64(gji_line *l, const char *key, uint64_t value);
GJI_HIDDEN void gji_i64(gji_line *l, const char *key, int64_t value);
GJI_HIDDEN void gji_dbl(gji_line *l, const char *key, double value);
GJI_HIDDEN void gji_hex(gji_line *l, const char *key, uint64_t value);
/** A JSON array of strings. */
GJI_HIDDEN void gji_strs(gji_line *l, const char *key, const char *const *v, int n);
/** Raw JSON text as the value. */
GJI_HIDDEN void gji_raw(gji_line *l, const char *key, const char *json);
/** Close the record and write it as one line (after the lines kept for later). */
GJI_HIDDEN void gji_end(gji_line *l);
/** Close the record and keep it for later (record_batch.c): it is written with the process's next
 *  record written at once, or when the oldest line kept has waited 100 ms (`now`, gji_now's clock)
 *  at the next line kept, or at exit or a flush. For records a program may make a thousand times
 *  a second (steps): none of them costs a system call; a crash loses the lines kept. */
GJI_HIDDEN void gji_end_later(gji_line *l, uint64_t now);
/** Write the lines kept for later now (gpujit_inject_flush, a session's end; gji_end does it). */
GJI_HIDDEN void gji_later_flush(void);

/** Between these, this thread's lines are kept and written together (at the end, or when 256 KiB
 * are waiting): the lines of one CUPTI buffer cost one write, not one each. They nest. */
GJI_HIDDEN void gji_batch_begin(void);
GJI_HIDDEN void gji_batch_end(void);

/* record_batch.c's side of gji_end (it calls nothing of record.c's: what writes is given to it): */
/** Whole lines into this thread's batch; false when it has none open. */
GJI_HIDDEN bool gji_batch_take(const char *s, size_t n);
/** Whole lines kept for later, the newest made at `now`. */
GJI_HIDDEN void gji_later_keep(const char *s, size_t n, uint64_t now);
/** What writes whole lines to this process's records file (record.c gives it at its load). */
GJI_HIDDEN void gji_batch_writer(void (*fn)(const char *s, size_t n));

/** Whether this very process (not a vfork child sharing its memory) has its records file open. */
GJI_HIDDEN bool gji_owns_file(void);
/** This process's records file now, with its proc record (else it is made at the first record). */
GJI_HIDDEN void gji_open_now(void);
/** Register a lock of the library to be made free again in a forked child (call from a
 *  constructor): a thread that held it at the fork does not exist in the child. */
GJI_HIDDEN void gji_fork_safe(pthread_mutex_t *m);

/** Say something once per process and kind of trouble (a "note" record). */
GJI_HIDDEN void gji_note(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** XXH3-128 of data as 32 hex digits (the hash the report matches images by). */
GJI_HIDDEN void gji_hash(char out[33], const void *data, size_t size);

/** Count of records this process could not keep (bounded buffers), written at exit. */
GJI_HIDDEN void gji_lost(uint64_t n);

/** Write this process's exit record now (once; `status` -1 when not known). */
GJI_HIDDEN void gji_exit_record(int status);
/** What to write just before the exit record (a toolchain program's end record, tool.c). */
GJI_HIDDEN void gji_set_end_hook(void (*fn)(void));
/** What to flush before the exit record (CUPTI's buffers, in the process that started them). */
GJI_HIDDEN void gji_set_gpu_flush(void (*fn)(void));

#endif
