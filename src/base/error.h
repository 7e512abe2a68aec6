/* Errors and logging: the thread's last error and long log, errno translation, the log callback. */
#ifndef GPUJIT_BASE_ERROR_H
#define GPUJIT_BASE_ERROR_H

#include "gpujit/error.h"

#if defined(__GNUC__)
#  define GPUJIT__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define GPUJIT__PRINTF(a, b)
#endif

/** Set the thread's last error message and return `code`. */
int gpujit__error(int code, const char *fmt, ...) GPUJIT__PRINTF(2, 3);
/** Set the thread's long log (copied). */
void gpujit__error_set_log(const char *log);
/** errno → gpujit code, in one place. */
int gpujit__errno_code(int err);
/** Emit a log message through the user's callback, if any. */
void gpujit__log(gpujit_log_level level, const char *fmt, ...) GPUJIT__PRINTF(2, 3);

#endif
