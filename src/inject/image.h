/* What a module load was given, as fields of its record (image.c). */
#ifndef GPUJIT_INJECT_IMAGE_H
#define GPUJIT_INJECT_IMAGE_H

#include "inject/record.h"

/** "image" (cubin, fatbin, ptx), "bytes" and "hash" of an image in memory (a fatbin wrapper is
 *  followed to its fatbin); nothing for NULL. */
GJI_HIDDEN void gji_image_fields(gji_line *l, const void *p);
/** Where an image in memory begins (a fatbin wrapper followed to its fatbin), its length as far as
 *  its own header says and its kind ("cubin", "fatbin", "ptx"); NULL for NULL. */
GJI_HIDDEN const void *gji_image_extent(const void *p, size_t *size, const char **kind);
/** "image", "bytes" and "hash" of the cubin cuLinkComplete made (nothing for none). */
GJI_HIDDEN void gji_linked_fields(gji_line *l, const void *cubin, size_t size);
/** "file", "bytes" and "hash" of an image loaded from a file. */
GJI_HIDDEN void gji_file_fields(gji_line *l, const char *path);

/** XXH3-128 of a regular file's bytes (under 1 GiB) and its size; false when it cannot be read. */
GJI_HIDDEN bool gji_file_hash(const char *path, char out[33], uint64_t *bytes);
/** The hashes of the fatbins a host object or library embeds (its .nv_fatbin section: what the
 *  CUDA runtime registers and the driver loads, byte for byte), as "fatbins"; nothing for a file
 *  that is no ELF or embeds none. */
GJI_HIDDEN void gji_fatbins_fields(gji_line *l, const char *path);

#endif
