/* CUPTI's completed activity buffers, read (activity.c): kernels, copies and memsets summed and,
 * while the trace budget lasts, drawn one by one; the driver's JIT; NVTX ranges. */
#ifndef GPUJIT_INJECT_ACTIVITY_H
#define GPUJIT_INJECT_ACTIVITY_H

#include <cupti.h>
#include <stdint.h>

#include "inject/record.h"

typedef CUptiResult (*gji_next_record_fn)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*gji_dropped_fn)(CUcontext, uint32_t, size_t *);

/** CUPTI's record reader and dropped-record count (either may be NULL: cuptiActivityGetNextRecord
 *  missing reads nothing), and how many activities the trace draws one by one. Before activity. */
GJI_HIDDEN void gji_activity_init(gji_next_record_fn next_record, gji_dropped_fn dropped, uint64_t budget);
/** CUPTI's buffer-completed callback: the buffer's records written, the buffer given back. */
GJI_HIDDEN void CUPTIAPI gji_activity_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                                size_t valid);
/** Measuring only: completed buffers are given back unread from now on (what CUPTI's records cost
 *  without this library's reading; the report then counts nothing of the GPU's). */
GJI_HIDDEN void gji_activity_unread(void);
/** The gpu_end record: activities drawn and only counted, kernels whose launch was not found. */
GJI_HIDDEN void gji_activity_end_record(void);

/** The two clocks side by side (the "clock" record's): launch records' times go to the host's. */
GJI_HIDDEN void gji_activity_clock(uint64_t cupti, uint64_t host);

#endif
