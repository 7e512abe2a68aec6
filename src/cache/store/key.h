/* Cache keys: XXH3-128 over labelled fields, so no two different inputs run together. */
#ifndef GPUJIT_CACHE_STORE_KEY_H
#define GPUJIT_CACHE_STORE_KEY_H

#include <stddef.h>

/** A finished key: 16 bytes and their 32 hex digits. */
typedef struct gpujit__key {
  unsigned char bytes[16];
  char hex[33];
} gpujit__key;

/** A key being computed. */
typedef struct gpujit__hasher gpujit__hasher;

/** @return a fresh hasher, or NULL when out of memory. */
gpujit__hasher *gpujit__hasher_new(void);
void gpujit__hasher_free(gpujit__hasher *h);
/** Add one field: its label's length and text, then the data's length and bytes. */
void gpujit__hasher_field(gpujit__hasher *h, const char *label, const void *data, size_t len);
/** A string field; NULL hashes as the empty string. */
void gpujit__hasher_str(gpujit__hasher *h, const char *label, const char *s);
/** Finish: the key of every field added so far. */
void gpujit__hasher_digest(gpujit__hasher *h, gpujit__key *out);

#endif
