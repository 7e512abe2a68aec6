/* CUPTI's activity records, loaded at run time: kernels (serialised or concurrent kind), copies and
 * memsets, each tied to the gpujit activity that issued it by an external correlation id. */
#ifndef GPUJIT_TIMING_CUPTI_H
#define GPUJIT_TIMING_CUPTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One GPU activity CUPTI reported. Times in nanoseconds on CUPTI's clock. */
typedef struct gpujit__cupti_rec {
  uint64_t external;   /* the gpujit activity's id (0: none pushed) */
  uint64_t start, end;
  uint64_t bytes;      /* copies and memsets */
  uint64_t graph_node; /* kernels inside a graph: the node's id, else 0 */
  uint32_t graph_id;
  int kind;            /* 0 kernel, 1 memcpy, 2 memset */
  char name[128];      /* kernels: the (mangled) name */
} gpujit__cupti_rec;

/**
 * Load libcupti (the toolkit's: $CUDA_PATH, /usr/local/cuda; then the loader's path) and start
 * recording: kernels of the serialised kind (`concurrent` false) or the concurrent kind, copies,
 * memsets, external correlations. Process-wide; a second start with the other kind switches.
 * @return 0, or GPUJIT_EUNSUPPORTED with a message saying why CUPTI cannot be used.
 */
int gpujit__cupti_start(bool concurrent);
/** Stop recording (the records taken so far stay until taken). */
void gpujit__cupti_stop(void);
/** Tie the activities issued until the pop to `id` (nothing when CUPTI is not started). */
void gpujit__cupti_push(uint64_t id);
void gpujit__cupti_pop(void);
/**
 * Flush CUPTI's buffers (call after synchronising) and move every complete record with an
 * external id in [first, last] into `out` (caller frees), in CUPTI's order.
 * @param dropped receives how many records CUPTI reported dropped since it started.
 * @return 0, GPUJIT_ENOMEM.
 */
int gpujit__cupti_take(gpujit__cupti_rec **out, size_t *count, uint64_t first, uint64_t last, uint64_t *dropped);
/** CUPTI's clock minus the trace clock, in microseconds (to place records on a trace). */
double gpujit__cupti_clock_offset_us(void);

#endif
