/* Content hashes as gpujit writes them: XXH3-128, canonical (big-endian) bytes, 32 hex digits. */
#ifndef GPUJIT_BASE_HASH_H
#define GPUJIT_BASE_HASH_H

#include <stdbool.h>
#include <stddef.h>

/** The XXH3-128 of `size` bytes at `data` as 32 lower-case hex digits and a NUL. */
void gpujit__hash_hex(char out[33], const void *data, size_t size);

/** Whether the `len` bytes at `s` are a digest as gpujit writes one: exactly 32 lower-case hex
 *  digits (a key, a group's name, a content hash). */
bool gpujit__is_digest(const char *s, size_t len);

#endif
