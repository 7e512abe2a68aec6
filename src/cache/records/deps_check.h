/* One dependency record checked (deps_check.c), for the checks that share a group's records among
 * threads (deps_share.c). */
#ifndef GPUJIT_CACHE_RECORDS_DEPS_CHECK_H
#define GPUJIT_CACHE_RECORDS_DEPS_CHECK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "cache/records/deps.h"

/* Stats of many files in few directories: each through its directory, opened once (the kernel
 * then walks one component, not the whole path; a CUB module's 600 toolkit headers lie in ~50). */
typedef struct gpujit__dir_cursor {
  char dir[PATH_MAX];
  size_t len;
  int fd;
  const char *next; /* the path checked after this one, if any: a directory that holds only this
                       one is not worth opening (open and close cost two stats) */
} gpujit__dir_cursor;
#define GPUJIT__NO_DIR ((size_t)-1) /* a cursor's `len` before it holds a directory */

/** Record `e` checked through `cur` (`len`: its path's length): 0 when it holds, with `*refresh`
 *  set where it held by content and its new stat is to be written back and `*moved` where a
 *  `once` file's identity may have changed; else nonzero, `why` saying what changed. */
int gpujit__deps_verify_one(gpujit__dep *e, size_t len, gpujit__dir_cursor *cur, bool *refresh, bool *moved,
                            char *why, size_t n);
/** One exact check of a view's record: 0 when it holds exactly as recorded, else GPUJIT_ENOENT. */
int gpujit__deps_check_rec(const gpujit__deps_rec *r, size_t len, gpujit__dir_cursor *cur);
/** qsort order of records (pointers to gpujit__dep) by path: directory order. */
int gpujit__deps_by_path(const void *a, const void *b);

#endif
