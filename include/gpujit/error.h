/* Error codes, the thread-local last error, and the log callback: the library never prints. */
#ifndef GPUJIT_ERROR_H
#define GPUJIT_ERROR_H

#include "common.h"

GPUJIT_BEGIN_DECLS

/* One table generates the enum, the names and gpujit_strerror(). Codes are stable. */
#define GPUJIT_ERROR_TABLE(X)                                                        \
  X(OK, 0, "success")                                                               \
  X(EINVAL, -1, "invalid argument")                                                 \
  X(ENOMEM, -2, "out of memory")                                                    \
  X(EIO, -3, "I/O error")                                                           \
  X(ENOENT, -4, "not found")                                                        \
  X(EVERSION, -5, "unsupported options version")                                    \
  X(ECOMPILE, -6, "compile error")                                                  \
  X(ELINK, -7, "link error")                                                        \
  X(ENVRTC, -8, "NVRTC internal error")                                             \
  X(EPARSE, -9, "malformed input")                                                  \
  X(ECORRUPT, -10, "corrupt data")                                                  \
  X(ENODRIVER, -11, "CUDA driver unavailable")                                      \
  X(ENODEVICE, -12, "no CUDA device")                                               \
  X(ECUDA, -13, "CUDA driver error")                                                \
  X(EBUSY, -14, "resource busy")                                                    \
  X(EUNSUPPORTED, -15, "unsupported operation")                                    \
  X(ECANCELLED, -16, "cancelled")                                                   \
  X(EWORKER, -17, "worker process failed")                                          \
  X(ENOTOOLKIT, -18, "CUDA toolkit not found")

typedef enum gpujit_error {
#define GPUJIT__ENUM(name, value, text) GPUJIT_##name = value,
  GPUJIT_ERROR_TABLE(GPUJIT__ENUM)
#undef GPUJIT__ENUM
} gpujit_error;

/** @return a static one-line description of an error code ("unknown error" if not one). */
GPUJIT_API const char *gpujit_strerror(int code);

/** @return the code's symbolic name, e.g. "GPUJIT_ECOMPILE" (static storage). */
GPUJIT_API const char *gpujit_error_name(int code);

/**
 * @return the calling thread's last error message, one line with context
 * ("compile failed: saxpy.cu:12:5: identifier \"x\" is undefined"), or "" when none.
 * Valid until the next gpujit call on this thread.
 */
GPUJIT_API const char *gpujit_error_last(void);

/**
 * @return the calling thread's last long diagnostic log (the full NVRTC or nvJitLink log of
 * the last failed compile or link), or "" when none. Valid until the next failing call on
 * this thread.
 */
GPUJIT_API const char *gpujit_error_log(void);

/** Clear the calling thread's last error and log. */
GPUJIT_API void gpujit_error_clear(void);

typedef enum gpujit_log_level {
  GPUJIT_LOG_ERROR = 0,
  GPUJIT_LOG_WARN = 1,
  GPUJIT_LOG_INFO = 2,
  GPUJIT_LOG_DEBUG = 3
} gpujit_log_level;

/** Receives library messages at or below the configured level. May be called from any thread. */
typedef void (*gpujit_log_cb)(gpujit_log_level level, const char *message, void *payload);

/**
 * Route library messages at `level` or more severe to `cb`. NULL cb turns logging off
 * (the default). Process-wide; safe to call at any time.
 */
GPUJIT_API void gpujit_log_set(gpujit_log_level level, gpujit_log_cb cb, void *payload);

GPUJIT_END_DECLS

#endif
