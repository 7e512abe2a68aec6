/* The POSIX tar (ustar) blocks a saved profile is made of (profile/saved.c writes them,
 * profile/saved_open.c reads them): regular files only, names of one path component. */
#ifndef GPUJIT_PROFILE_TAR_H
#define GPUJIT_PROFILE_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GPUJIT__TAR_BLOCK 512
/** The largest member: 11 octal digits of size (8 GiB - 1). */
#define GPUJIT__TAR_MAX_SIZE ((uint64_t)077777777777)

/** What a block holds. */
typedef enum gpujit__tar_kind {
  GPUJIT__TAR_FILE,     /**< a regular file's header: its name and size were read */
  GPUJIT__TAR_END,      /**< an all-zero block: the end of the archive */
  GPUJIT__TAR_OTHER,    /**< a ustar header of something else (a directory, a link ...) */
  GPUJIT__TAR_NOT_TAR,  /**< no ustar magic: not a tar header at all */
  GPUJIT__TAR_CHECKSUM  /**< ustar magic, but its checksum does not match: damaged */
} gpujit__tar_kind;

/** Whether `name` may be a member's name: 1 to 99 of [A-Za-z0-9._-], not starting with '.'. */
bool gpujit__tar_name_ok(const char *name);

/** Fill `block` with the header of a regular file `name` (gpujit__tar_name_ok) of `size` bytes
 *  (at most GPUJIT__TAR_MAX_SIZE), mode 0644, modified at `mtime` (seconds). */
void gpujit__tar_header(unsigned char block[GPUJIT__TAR_BLOCK], const char *name, uint64_t size, int64_t mtime);

/** Read one header block. `name` (100 bytes and a NUL) and `size` are filled for a FILE (and
 *  for OTHER, as far as they can be read). */
gpujit__tar_kind gpujit__tar_parse(const unsigned char block[GPUJIT__TAR_BLOCK], char name[101], uint64_t *size);

/** The zero bytes that pad `size` to a whole block. */
static inline size_t gpujit__tar_pad(uint64_t size)
{
  return (size_t)((GPUJIT__TAR_BLOCK - size % GPUJIT__TAR_BLOCK) % GPUJIT__TAR_BLOCK);
}

#endif
