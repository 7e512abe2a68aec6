/* Files the user names for gpujit to write (build -o, time traces, profile traces, cache
 * exports): a regular file is replaced whole, a device or FIFO is written through, and nothing
 * else is ever replaced. */
#ifndef GPUJIT_BASE_OUTPUT_H
#define GPUJIT_BASE_OUTPUT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/** An output being written: `fd` takes the bytes. */
typedef struct gpujit__output {
  int fd;
  bool through;        /**< written in place: a character device, a FIFO, or a regular file in a
                            directory where no temporary file can be made */
  char tmp[PATH_MAX];  /**< the temporary file renamed over the target at commit, or "" */
  char path[PATH_MAX];
} gpujit__output;

/** How long an output that is a FIFO waits for a reader before it is an error. */
#define GPUJIT__FIFO_WAIT_MS 2000

/** Open `path` for a whole new content. No file yet, or a regular file: a temporary file beside
 *  it (atomic at commit). A character device (/dev/null) or FIFO: the node itself, never replaced
 *  (a FIFO no reader opens within GPUJIT__FIFO_WAIT_MS is an error, never a hang). /dev/stdout,
 *  /dev/stderr, /dev/fd/N: that descriptor, written where it stands.
 *  A symbolic link, directory, block device or socket: refused, naming what it is. */
int gpujit__output_open(gpujit__output *o, const char *path);
/** The descriptor `path` names (/dev/stdout 1, /dev/stderr 2, /dev/fd/N and /proc/self/fd/N N), or -1. */
int gpujit__std_fd(const char *path);
/** Close, and put a temporary file in place; on error nothing was replaced. */
int gpujit__output_commit(gpujit__output *o);
/** Close and remove the temporary file: the target is as it was (a written-through node is not). */
void gpujit__output_abort(gpujit__output *o);
/** open + write + commit. */
int gpujit__output_write(const char *path, const void *data, size_t len);

/** Write a build output: left alone (mtime too: nothing downstream need rebuild) when it holds
 *  these bytes already, else written as gpujit__output_write() does: a regular
 *  file atomically without fsync, as compilers do; a device or FIFO through.
 *  @return 1 when left alone, 0 when written, or the write's error. */
int gpujit__file_update(const char *path, const void *data, size_t len);

#endif
