/* Whole-file I/O and paths: reads, atomic writes, absolute paths, directories. */
#ifndef GPUJIT_BASE_FS_H
#define GPUJIT_BASE_FS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/buf.h"

/** The largest file gpujit reads whole: a source, header, trace or record file (1 GiB). */
#define GPUJIT__MAX_INPUT_BYTES ((uint64_t)1 << 30)

/** Read a whole regular file; NUL-terminated. A FIFO, device, socket or directory is refused
 *  (never waited on), and so is a file over GPUJIT__MAX_INPUT_BYTES. Errors name the path. */
int gpujit__file_read(gpujit__buf *out, const char *path);
/** gpujit__file_read(), also giving the file's stat as opened (`opened`: its fstat before the read). */
int gpujit__file_read_stat(gpujit__buf *out, const char *path, struct stat *opened);
/** write() until all of `len` is written (EINTR retried); -1 with errno set on failure. */
int gpujit__write_all(int fd, const void *data, size_t len);
/** 0 when a file of `len` bytes stays within the process's file size limit (RLIMIT_FSIZE,
 *  `ulimit -f`); past it, GPUJIT_EIO naming `path` and the limit — where the write itself would
 *  raise SIGXFSZ, which kills the process. */
int gpujit__fsize_check(const char *path, uint64_t len);
/** Open directory `path`, which lies beneath `top`, creating its missing components (mode
 *  `mode`), without following a symbolic link or anything but a directory beneath `top` (`top`
 *  itself is followed): a link there is GPUJIT_EIO naming it, so nothing is written through
 *  a link gpujit did not make. @return a descriptor (O_CLOEXEC), or a negative error. */
int gpujit__dir_open_beneath(const char *top, const char *path, unsigned mode);
/** Write atomically: temp file beside `path`, fsync, rename. */
int gpujit__file_write_atomic(const char *path, const void *data, size_t len);
/** As gpujit__file_write_atomic(); `durable` false skips the fsync (the rename stays atomic). */
int gpujit__file_write_atomic_ex(const char *path, const void *data, size_t len, bool durable);
/** Absolute, normalised path (no symlink resolution beyond realpath of existing files). */
char *gpujit__abspath(const char *path);
/** Collapse "//", "/./" and "/../" in an absolute path, in place (no symlinks resolved). */
void gpujit__normpath(char *path);
/** The rest of `path` after `dir` and a '/' when `path` lies under `dir` (a whole component);
 *  NULL otherwise, and for a NULL or empty `dir`. */
const char *gpujit__path_under(const char *path, const char *dir);
/** Directory part of a path (malloc'd). */
char *gpujit__dirname(const char *path);
/** Base name without its extension ("a/b.cu" -> "b"), malloc'd. */
char *gpujit__stem(const char *path);
/** Base name without directory; pointer into `path`. */
const char *gpujit__basename(const char *path);
/** mkdir -p with mode. */
int gpujit__mkdirs(const char *path, unsigned mode);
/** Remove `path` and everything beneath it (rm -rf; symlinks removed, never followed). Nothing
 *  there is no error. @return 0 or GPUJIT_EIO naming the path. */
int gpujit__rmrf(const char *path);
/**
 * The default cache directory, absolute: $GPUJIT_CACHE_DIR, else $XDG_CACHE_HOME/gpujit, else
 * ~/.cache/gpujit ($HOME unset or empty: /tmp/.cache/gpujit). The one place it is worked out: the
 * cache, the toolkit's remembered hashes beside it and the build server all ask here.
 * @param origin receives which it came from: "GPUJIT_CACHE_DIR", "XDG_CACHE_HOME" or "HOME"
 *        (static text); may be NULL.
 * @return the directory, which the caller frees; NULL when out of memory.
 */
char *gpujit__cache_default_dir(const char **origin);
bool gpujit__is_dir(const char *path);
/** Whether anything (a file, directory, device ...) is at `path` (symlinks followed). */
bool gpujit__exists(const char *path);

#endif
