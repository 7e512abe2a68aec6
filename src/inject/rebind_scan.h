/* In-process rebinding's by-value half (rebind_scan.c): the process's readable mappings, and the
 * words of a loaded object's writable data that hold one of a few addresses. */
#ifndef GPUJIT_INJECT_REBIND_SCAN_H
#define GPUJIT_INJECT_REBIND_SCAN_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inject/record.h"

/** The most addresses looked for at once. */
#define GJI_SCAN_MAX 128

typedef struct gji_region {
  uintptr_t start, end;
  bool writable, private_map; /* as /proc/self/maps says now */
} gji_region;

/** Read /proc/self/maps again: its readable mappings, in address order. */
GJI_HIDDEN void gji_maps_read(void);
/** The readable mapping holding `p` as last read, or NULL. */
GJI_HIDDEN const gji_region *gji_maps_find(uintptr_t p);

/** The addresses looked for: a word holding `real[i]` is handed to the hit function with
 *  `wrapper[i]`. At most GJI_SCAN_MAX; duplicates are dropped. */
GJI_HIDDEN void gji_scan_set(const uintptr_t *real, void *const *wrapper, size_t n);

typedef enum gji_scan_mode {
  GJI_SCAN_WRITTEN, /* the pages the process wrote (the default) */
  GJI_SCAN_FULL     /* every readable page (the former scan: measuring, GPUJIT_BENCH_REBIND=full) */
} gji_scan_mode;

/** What a pass looked at, in bytes. */
typedef struct gji_scan_stats {
  size_t objects;
  unsigned long long writable;  /* the objects' writable segments */
  unsigned long long scanned;   /* of them, read word by word */
  bool pagemap;                 /* /proc/self/pagemap said which pages were written */
} gji_scan_stats;

typedef void (*gji_scan_hit_fn)(void **where, void *wrapper, void *payload);

/** A pass begins (after gji_maps_read): its figures are added to `stats`. */
GJI_HIDDEN void gji_scan_begin(gji_scan_mode mode, gji_scan_stats *stats);
/** Each word of `info`'s writable segments that holds an address looked for, to `hit`. */
GJI_HIDDEN void gji_scan_object(const struct dl_phdr_info *info, gji_scan_hit_fn hit, void *payload);
/** The pass ends. */
GJI_HIDDEN void gji_scan_end(void);

#endif
