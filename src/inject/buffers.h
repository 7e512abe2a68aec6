/* CUPTI's activity buffers (buffers.c). CUPTI asks for one in the thread that launches — the
 * program's — and unless told they come zeroed it zeroes each there: measured with CUPTI's
 * overhead records on the H100, 2.7 ms a 4 MiB buffer, 36 ms in 200,000 launches. So buffers
 * come zeroed and already touched: completed ones are zeroed in CUPTI's own thread and kept for
 * the next request, and that thread makes a new one ready whenever fewer than two are, so a
 * request in the program's thread finds one (it allocates only when launches outrun CUPTI's
 * deliveries). CUPTI is told (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) by cupti.c. */
#ifndef GPUJIT_INJECT_BUFFERS_H
#define GPUJIT_INJECT_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "inject/record.h"

/** Bytes of each activity buffer, unless gji_buffers_prepare is told otherwise. */
#define GJI_BUFFER_BYTES (4u << 20)

/** Buffers of `bytes` each (0: GJI_BUFFER_BYTES), `n` of them zeroed and their pages touched now
 *  (at start, not in a launch). */
GJI_HIDDEN void gji_buffers_prepare(int n, size_t bytes);
/** CUPTI's request (CUpti_BuffersCallbackRequestFunc): a zeroed buffer. */
GJI_HIDDEN void gji_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records);
/** A completed buffer, read: zeroed and kept for the next request (or freed), and one more made
 *  ready when few are. Called in CUPTI's thread, not the program's. */
GJI_HIDDEN void gji_buffer_give_back(uint8_t *buffer);
/** Buffers handed out that had to be allocated in the requesting thread (none were ready). */
GJI_HIDDEN uint64_t gji_buffers_allocated_late(void);

#endif
