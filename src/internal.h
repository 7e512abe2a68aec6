/* Internal helpers shared across gpujit's source files: errors, buffers, files, clocks. */
#ifndef GPUJIT_INTERNAL_H
#define GPUJIT_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpujit/error.h"

#if defined(__GNUC__)
#  define GPUJIT__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define GPUJIT__PRINTF(a, b)
#endif

/* ---- errors (error.c) ---- */
/** Set the thread's last error message and return `code`. */
int gpujit__error(int code, const char *fmt, ...) GPUJIT__PRINTF(2, 3);
/** Set the thread's long log (copied). */
void gpujit__error_set_log(const char *log);
/** errno → gpujit code, in one place. */
int gpujit__errno_code(int err);
/** Emit a log message through the user's callback, if any. */
void gpujit__log(gpujit_log_level level, const char *fmt, ...) GPUJIT__PRINTF(2, 3);

/* ---- growable byte buffer (util.c) ---- */
typedef struct gpujit__buf {
  char *data;
  size_t len;
  size_t cap;
} gpujit__buf;

int gpujit__buf_reserve(gpujit__buf *b, size_t extra);
int gpujit__buf_put(gpujit__buf *b, const void *data, size_t len);
int gpujit__buf_puts(gpujit__buf *b, const char *s);
int gpujit__buf_printf(gpujit__buf *b, const char *fmt, ...) GPUJIT__PRINTF(2, 3);
void gpujit__buf_free(gpujit__buf *b);

/* ---- string vector ---- */
typedef struct gpujit__strvec {
  char **items;
  size_t count;
  size_t cap;
} gpujit__strvec;

int gpujit__strvec_push(gpujit__strvec *v, const char *s);
int gpujit__strvec_pushf(gpujit__strvec *v, const char *fmt, ...) GPUJIT__PRINTF(2, 3);
void gpujit__strvec_free(gpujit__strvec *v);

char *gpujit__strdup(const char *s);
char *gpujit__strndup(const char *s, size_t n);

/* ---- files ---- */
/** Read a whole file; NUL-terminated. Errors name the path. */
int gpujit__file_read(gpujit__buf *out, const char *path);
/** Write atomically: temp file beside `path`, fsync, rename. */
int gpujit__file_write_atomic(const char *path, const void *data, size_t len);
/** Absolute, normalised path (no symlink resolution beyond realpath of existing files). */
char *gpujit__abspath(const char *path);
/** Directory part of a path (malloc'd). */
char *gpujit__dirname(const char *path);
/** Base name without directory; pointer into `path`. */
const char *gpujit__basename(const char *path);
/** mkdir -p with mode. */
int gpujit__mkdirs(const char *path, unsigned mode);
bool gpujit__is_dir(const char *path);

/* ---- clocks ---- */
/** CLOCK_MONOTONIC in microseconds. */
double gpujit__now_us(void);

#endif
