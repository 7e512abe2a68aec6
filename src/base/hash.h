/* Content hashes as gpujit writes them: XXH3-128, canonical (big-endian) bytes, 32 hex digits. */
#ifndef GPUJIT_BASE_HASH_H
#define GPUJIT_BASE_HASH_H

#include <stddef.h>

/** The XXH3-128 of `size` bytes at `data` as 32 lower-case hex digits and a NUL. */
void gpujit__hash_hex(char out[33], const void *data, size_t size);

#endif
