/* Remote stores under the local cache: one or more servers tried in order (an HTTP server, a
 * Redis), each value an opaque blob by key. A server that fails (down, slow, full, refusing) is
 * left alone for the rest of the process: a build never waits on it twice, and never fails for
 * it (one warning per process, errors counted). */
#ifndef GPUJIT_REMOTE_REMOTE_H
#define GPUJIT_REMOTE_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

typedef struct gpujit__remote gpujit__remote;

typedef struct gpujit__remote_counts {
  uint64_t hits, misses, errors, bytes_in, bytes_out;
} gpujit__remote_counts;

/**
 * Parse `spec`: URLs separated by spaces, each `http://…`, `https://…` or `redis://…`, with
 * attributes `|layout=flat|bazel`, `|connect-timeout=MS` (default 1000), `|timeout=MS` (default
 * 10000), `|bearer-env=VAR`, `|userpwd-env=VAR`, `|password-env=VAR`, `|expire=SECONDS`,
 * `|max-size=BYTES` (default 256 MiB). `read_only`: never written.
 * @return 0, or GPUJIT_EINVAL naming the bad URL or attribute.
 */
int gpujit__remote_open(gpujit__remote **out, const char *spec, bool read_only);
void gpujit__remote_free(gpujit__remote *r);
bool gpujit__remote_read_only(const gpujit__remote *r);

/** The first server that has `key`. @return 0, or GPUJIT_ENOENT (absent, or every server failed). */
int gpujit__remote_get(gpujit__remote *r, const char *key, gpujit__buf *out);

/** A value that turned out bad (checksum, schema, key): counted as an error, not a hit. */
void gpujit__remote_bad(gpujit__remote *r, const char *key, const char *why);

/** Store on every writable server (best effort; failures counted and warned once). */
void gpujit__remote_put(gpujit__remote *r, const char *key, const void *data, size_t len);

/** What happened since the last call (then zero). */
void gpujit__remote_take_counts(gpujit__remote *r, gpujit__remote_counts *out);

#endif
