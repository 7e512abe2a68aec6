/* Named rows of a table: an array kept in insertion order with an open-addressing index; the
 * tables' names. */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "trace/rows.h"

static const char *const table_names[GPUJIT_TRACE_TABLE_COUNT] = {
    "phases", "headers", "templates", "instantiations", "functions", "modules"};

const char *gpujit_trace_table_name(gpujit_trace_table t)
{
  return (unsigned)t < GPUJIT_TRACE_TABLE_COUNT ? table_names[t] : "unknown";
}

static uint64_t hash_str(const char *s)
{
  uint64_t h = 1469598103934665603ULL;
  while (*s)
    h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
  return h;
}

static int reindex(gpujit__rows *t)
{
  size_t n = 64, *slots;
  while (n < (t->count + 1) * 2)
    n *= 2;
  if (!(slots = calloc(n, sizeof(*slots))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t i = 0; i < t->count; i++) {
    size_t s = hash_str(t->rows[i].name) & (n - 1);
    while (slots[s])
      s = (s + 1) & (n - 1);
    slots[s] = i + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->nslots = n;
  return 0;
}

static size_t *slot_of(const gpujit__rows *t, const char *name)
{
  size_t s;
  if (!t->nslots)
    return NULL;
  s = hash_str(name) & (t->nslots - 1);
  while (t->slots[s]) {
    if (strcmp(t->rows[t->slots[s] - 1].name, name) == 0)
      return &t->slots[s];
    s = (s + 1) & (t->nslots - 1);
  }
  return &t->slots[s];
}

int gpujit__rows_add(gpujit__rows *t, const char *name, double total_us, double max_us, uint64_t count)
{
  size_t *slot;
  gpujit_trace_stat *r;
  if ((t->count + 1) * 2 > t->nslots && reindex(t) < 0)
    return GPUJIT_ENOMEM;
  slot = slot_of(t, name);
  if (*slot) {
    r = &t->rows[*slot - 1];
    r->total_us += total_us;
    if (max_us > r->max_us)
      r->max_us = max_us;
    r->count += count;
    return 0;
  }
  if (!(r = gpujit__grow(t->rows, &t->cap, t->count, sizeof(*r), 32)))
    return GPUJIT_ENOMEM;
  t->rows = r;
  r = &t->rows[t->count];
  if (!(r->name = gpujit__strdup(name)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  r->total_us = total_us;
  r->max_us = max_us;
  r->count = count;
  *slot = ++t->count;
  t->sorted = false;
  return 0;
}

int gpujit__rows_merge(gpujit__rows *t, const gpujit__rows *from)
{
  int err = 0;
  for (size_t i = 0; i < from->count && err == 0; i++)
    err = gpujit__rows_add(t, from->rows[i].name, from->rows[i].total_us, from->rows[i].max_us, from->rows[i].count);
  return err;
}

const gpujit_trace_stat *gpujit__rows_find(const gpujit__rows *t, const char *name)
{
  size_t *slot = slot_of(t, name);
  return slot && *slot ? &t->rows[*slot - 1] : NULL;
}

static int cmp_rows(const void *pa, const void *pb)
{
  const gpujit_trace_stat *a = pa, *b = pb;
  if (a->total_us != b->total_us)
    return a->total_us > b->total_us ? -1 : 1;
  return strcmp(a->name, b->name);
}

int gpujit__rows_sort(gpujit__rows *t)
{
  if (t->sorted)
    return 0;
  if (t->count)
    qsort(t->rows, t->count, sizeof(*t->rows), cmp_rows);
  t->sorted = true;
  return reindex(t); /* indices moved */
}

void gpujit__rows_free(gpujit__rows *t)
{
  for (size_t i = 0; i < t->count; i++)
    free((char *)t->rows[i].name);
  free(t->rows);
  free(t->slots);
  memset(t, 0, sizeof(*t));
}
