/* A set of strings mapping each to an index: open addressing over borrowed keys. */
#ifndef GPUJIT_BASE_STRSET_H
#define GPUJIT_BASE_STRSET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gpujit__strset {
  const char **keys; /* borrowed: each must outlive the set */
  size_t *vals;
  size_t slots, count;
} gpujit__strset;

/** Whether `key` is in the set; its value into `*val` when `val` is not NULL. */
bool gpujit__strset_find(const gpujit__strset *s, const char *key, size_t *val);
/** Add `key` (not already present) with `val`. @return 0 or GPUJIT_ENOMEM. */
int gpujit__strset_put(gpujit__strset *s, const char *key, size_t val);
void gpujit__strset_free(gpujit__strset *s);

#endif
