/* What passes between a project build and its workers: length-prefixed frames over pipes, module
 * options as JSON (the manifest's "options" use the same fields), a built module as JSON + image. */
#ifndef GPUJIT_PROJECT_WIRE_H
#define GPUJIT_PROJECT_WIRE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "gpujit/module.h"

enum {
  GPUJIT__FRAME_JOB = 1,
  GPUJIT__FRAME_RESULT = 2,
  GPUJIT__FRAME_IMAGE = 3,
  GPUJIT__FRAME_ACK = 4,   /* a build server took a request */
  GPUJIT__FRAME_STORED = 5 /* after an early answer ("store_follows"): the cache store is over */
};

/** Write one frame (blocking, whole). @return 0 or GPUJIT_EIO. */
int gpujit__frame_write(int fd, uint32_t type, const void *data, size_t len);

/** A frame reader fed from a non-blocking fd. */
typedef struct gpujit__frame_reader {
  gpujit__buf in;
} gpujit__frame_reader;

/** Read what is there. @return 1 while open, 0 at end of file, GPUJIT_EIO on error. */
int gpujit__frame_fill(gpujit__frame_reader *r, int fd);
/** Take the next whole frame: its payload into `out` (replaced). @return 1 taken, 0 not yet. */
int gpujit__frame_take(gpujit__frame_reader *r, uint32_t *type, gpujit__buf *out);
/** Blocking: read exactly one frame. @return 1, 0 at end of file, GPUJIT_EIO/GPUJIT_EPARSE. */
int gpujit__frame_read(int fd, uint32_t *type, gpujit__buf *out);

/** Module options as JSON (trace, cache and version left out). */
cJSON *gpujit__options_to_json(const gpujit_module_options *o);

/** Options parsed from JSON (strings borrowed from the JSON, which must outlive them). */
typedef struct gpujit__options_holder {
  gpujit_module_options o;
  const char **lists[5];
} gpujit__options_holder;

/** @return 0, or GPUJIT_EPARSE naming `what` and the field (the holder then holds nothing). */
int gpujit__options_from_json(gpujit__options_holder *h, const cJSON *j, const char *what);
void gpujit__options_holder_free(gpujit__options_holder *h);

/** Lay `over`'s fields on a copy of `base`. @return a new object (NULL: out of memory). */
cJSON *gpujit__options_merge(const cJSON *base, const cJSON *over);

/** A job made fit for another process, with another working directory and environment (a
 *  build server): every file and include directory absolute, the arch resolved here. */
int gpujit__job_portable(cJSON *job, gpujit_cache *cache);
/** A job for a worker: `files` (paths as the worker opens them), `options` (taken: it becomes
 *  the job's), the cache it builds through (NULL: none), whether it traces, whether more of its
 *  include block follow. */
cJSON *gpujit__job_json(long id, const char *const *files, size_t count, cJSON *options, const gpujit_cache *cache,
                        bool trace, bool pch_more);

/** A built module (or a failed build) as JSON; the image travels in a frame of its own. */
cJSON *gpujit__module_to_json(const gpujit_module *m);
/** Rebuild a module from gpujit__module_to_json()'s JSON and its image. */
int gpujit__module_from_json(gpujit_module **out, const cJSON *j, gpujit__buf *image);

#endif
