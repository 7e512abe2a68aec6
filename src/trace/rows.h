/* Named rows of a table (total, max, count), found by name in constant time. */
#ifndef GPUJIT_TRACE_ROWS_H
#define GPUJIT_TRACE_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "gpujit/trace.h"

typedef struct gpujit__rows {
  gpujit_trace_stat *rows; /* names owned */
  size_t count, cap;
  size_t *slots; /* open addressing: index + 1, 0 empty */
  size_t nslots;
  bool sorted;
} gpujit__rows;

/** Add `count` samples totalling `total_us` (largest `max_us`) to the row `name`, made if new.
 *  @return 0 or GPUJIT_ENOMEM. */
int gpujit__rows_add(gpujit__rows *t, const char *name, double total_us, double max_us, uint64_t count);
/** Add every row of `from` to `t`. */
int gpujit__rows_merge(gpujit__rows *t, const gpujit__rows *from);
/** The row named `name`, or NULL (borrowed until the next add). */
const gpujit_trace_stat *gpujit__rows_find(const gpujit__rows *t, const char *name);
/** Sort by total, largest first (names break ties). @return 0 or GPUJIT_ENOMEM. */
int gpujit__rows_sort(gpujit__rows *t);
void gpujit__rows_free(gpujit__rows *t);

#endif
