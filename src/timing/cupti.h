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
  int copy_kind;       /* memcpy: CUPTI's CUpti_ActivityMemcpyKind */
  uint32_t device;     /* the device it ran on */
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
/**
 * How a timed activity is tied to its CUPTI records. By callback (the default where gpujit holds
 * CUPTI's one subscriber): CUPTI calls gpujit at the entry of each driver call gpujit times
 * (launch, graph launch, async copy, memset), and the callback stores that call's correlation id
 * in this thread's gpujit__cupti_corr: the timer zeroes it before its call and reads it after, so
 * a launch costs two thread-local accesses and no CUPTI call; the records carry the same id. By
 * external ids (another tool holds the subscriber; a benchmark's samples): an id is pushed before
 * and popped after each, and CUPTI's driver-API and external-correlation records tie them.
 */
extern _Thread_local uint32_t gpujit__cupti_corr;
/** After gpujit__cupti_start, for a timer: subscribe (the launch callbacks on), or where another
 *  holds the subscriber, external ids on. A capture alone never subscribes. @return 0, or
 *  GPUJIT_EUNSUPPORTED with CUPTI's reason. */
int gpujit__cupti_tie(void);
/** Whether timed activities are tied by the callback now (subscribed and its callbacks on). */
bool gpujit__cupti_by_callback(void);
/** Turn the launch callbacks on or off (nothing where gpujit is not subscribed). */
void gpujit__cupti_callbacks(bool on);
/**
 * External correlation ids on or off: CUPTI's records of the driver calls gpujit times and of the
 * ids pushed around them (what gpujit__cupti_push needs to tie anything).
 * @return 0, or GPUJIT_EUNSUPPORTED with CUPTI's reason.
 */
int gpujit__cupti_external(bool on);
/** (cupti_ctx.c) Whether our subscriber's callback of `domain` (a CUpti_CallbackDomain) and `id`
 *  is a context call's: if so run's note of the thread's current context is forgotten (every
 *  thread's where a context ended). */
bool gpujit__cupti_ctx_call(int domain, uint32_t id);
/** (cupti_ctx.c) While gpujit holds the subscriber: the context calls' callbacks on through
 *  `enable` (false where CUPTI refused one), then run's watch of the current context
 *  (gpujit__ctx_watch); off, the watch first. */
void gpujit__cupti_ctx_watch(bool on, bool (*enable)(bool on, int domain, uint32_t id));
/** Why gpujit holds no subscriber ("" when it does, or CUPTI is not started). */
const char *gpujit__cupti_no_callback_why(void);
/** A timed window (a device's outermost CUPTI region) opens: records no one claims are kept while
 *  any is open (they may be another device's). @return the first of the window's external ids, a
 *  block of 2^32 no other window shares (devices' windows may overlap). */
uint64_t gpujit__cupti_window_open(void);
/** The window closes (before its records are taken). */
void gpujit__cupti_window_close(void);
/**
 * Flush CUPTI's buffers (call after synchronising) and move every complete record whose
 * correlation id is one of `ids` (ascending, `nids` of them) into `out` (caller frees), its
 * `external` set to that correlation id. Records tied to an external id stay for their taker;
 * others are dropped when no window is open.
 * @return 0, GPUJIT_ENOMEM.
 */
int gpujit__cupti_take_corr(gpujit__cupti_rec **out, size_t *count, const uint32_t *ids, size_t nids,
                            uint64_t *dropped);
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
/**
 * Process-wide capture: while one is open every record is kept, whoever issued it (other
 * frameworks' kernels, copies and memsets included), up to a fixed budget. Opening one starts
 * CUPTI with the concurrent kernel kind unless a timer started it already.
 * @return 0, or GPUJIT_EUNSUPPORTED (CUPTI cannot be used) with the reason.
 */
int gpujit__cupti_capture_open(void);
/** Close one capture; the last one closed drops what was kept. */
void gpujit__cupti_capture_close(void);
/** CUPTI's clock now, in nanoseconds (0 when CUPTI is not loaded). */
uint64_t gpujit__cupti_now_ns(void);
/**
 * Flush, then copy every kept record whose start lies in [t0, t1] (CUPTI's clock) into `out`
 * (caller frees), ordered by start. *lost receives the records the budget could not keep.
 */
int gpujit__cupti_capture_take(gpujit__cupti_rec **out, size_t *count, uint64_t t0, uint64_t t1, uint64_t *lost);
/** CUPTI's clock minus the trace clock, in microseconds (to place records on a trace). */
double gpujit__cupti_clock_offset_us(void);

#endif
