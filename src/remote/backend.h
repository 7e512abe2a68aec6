/* One remote store (an HTTP server or a Redis): get, put, exists of an opaque value by key. */
#ifndef GPUJIT_REMOTE_BACKEND_H
#define GPUJIT_REMOTE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"

/** The URL's attributes: `URL|name=value|…`. */
typedef struct gpujit__remote_attrs {
  char layout[16];          /* http: "flat" (URL/KEY) or "bazel" (URL/ac/KEY as 64 hex digits) */
  long connect_ms, total_ms; /* connect and whole-operation timeouts */
  char bearer_env[64];      /* http: the variable holding a bearer token */
  char userpwd_env[64];     /* http: the variable holding "user:password" (basic auth) */
  char password_env[64];    /* redis: the variable holding the password */
  long expire_s;            /* redis: SET … EX (0: none) */
  size_t max_bytes;         /* a larger value is refused */
} gpujit__remote_attrs;

typedef struct gpujit__backend gpujit__backend;
struct gpujit__backend {
  /* 0 with the value, GPUJIT_ENOENT when absent, another error when the server failed */
  int (*get)(gpujit__backend *b, const char *key, gpujit__buf *out);
  int (*put)(gpujit__backend *b, const char *key, const void *data, size_t len);
  int (*exists)(gpujit__backend *b, const char *key);
  void (*free)(gpujit__backend *b);
  char *shown; /* the URL without credentials, for messages */
};

int gpujit__http_open(gpujit__backend **out, const char *url, const gpujit__remote_attrs *a);
int gpujit__redis_open(gpujit__backend **out, const char *url, const gpujit__remote_attrs *a);

#endif
