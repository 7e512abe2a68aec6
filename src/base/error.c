/* The error table's strings, the library's version, the thread-local last error and log, and the log callback. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define GPUJIT__MSG_MAX 1024

static _Thread_local char tl_message[GPUJIT__MSG_MAX];
static _Thread_local char *tl_log;

const char *gpujit_strerror(int code)
{
  switch (code) {
#define GPUJIT__CASE(name, value, text) case value: return text;
    GPUJIT_ERROR_TABLE(GPUJIT__CASE)
#undef GPUJIT__CASE
  default: return "unknown error";
  }
}

const char *gpujit_error_name(int code)
{
  switch (code) {
#define GPUJIT__CASE(name, value, text) case value: return "GPUJIT_" #name;
    GPUJIT_ERROR_TABLE(GPUJIT__CASE)
#undef GPUJIT__CASE
  default: return "GPUJIT_UNKNOWN";
  }
}

const char *gpujit_version(void) { return GPUJIT_VERSION_STRING; }

const char *gpujit_error_last(void) { return tl_message; }

const char *gpujit_error_log(void) { return tl_log ? tl_log : ""; }

void gpujit_error_clear(void)
{
  tl_message[0] = '\0';
  free(tl_log);
  tl_log = NULL;
}

int gpujit__error(int code, const char *fmt, ...)
{
  /* Formatted aside first: a caller that adds context to the last message passes that message
   * itself ("GPUJIT_ARCH: %s", gpujit_error_last()), and printing into the buffer being read
   * overwrote its start before it was copied ("GPUJIT_ARCH: GPUJIT_ARCH: h 'sm_0'"). */
  char msg[GPUJIT__MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  memcpy(tl_message, msg, sizeof(msg));
  return code;
}

void gpujit__error_set_log(const char *log)
{
  free(tl_log);
  tl_log = log ? strdup(log) : NULL; /* NULL when out of memory: the short message stays */
}

int gpujit__errno_code(int err)
{
  switch (err) {
  case ENOENT:
  case ENOTDIR: return GPUJIT_ENOENT;
  case ENOMEM: return GPUJIT_ENOMEM;
  case EINVAL: return GPUJIT_EINVAL;
  case EBUSY:
  case EWOULDBLOCK: return GPUJIT_EBUSY;
  default: return GPUJIT_EIO;
  }
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static gpujit_log_cb log_cb;
static void *log_payload;
static gpujit_log_level log_level = GPUJIT_LOG_WARN;

/* Held a few instructions at a time; a child forked by another thread then starts with it free. */
static void log_lock_free(void) { pthread_mutex_init(&log_lock, NULL); }
__attribute__((constructor)) static void log_fork_safe(void) { pthread_atfork(NULL, NULL, log_lock_free); }

void gpujit_log_set(gpujit_log_level level, gpujit_log_cb cb, void *payload)
{
  pthread_mutex_lock(&log_lock);
  log_level = level;
  log_cb = cb;
  log_payload = payload;
  pthread_mutex_unlock(&log_lock);
}

void gpujit__log(gpujit_log_level level, const char *fmt, ...)
{
  gpujit_log_cb cb;
  void *payload;
  char msg[GPUJIT__MSG_MAX];
  va_list ap;

  pthread_mutex_lock(&log_lock);
  cb = level <= log_level ? log_cb : NULL;
  payload = log_payload;
  pthread_mutex_unlock(&log_lock);
  if (!cb)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  cb(level, msg, payload);
}
