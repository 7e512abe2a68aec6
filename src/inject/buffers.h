/* CUPTI's activity buffers (buffers.c). CUPTI asks for one in the thread that launches — the
 * program's — and unless told they come zeroed it zeroes each there: measured with CUPTI's
 * overhead records on the H100, 2.7 ms a 4 MiB buffer, 36 ms in 200,000 launches. So buffers
 * come zeroed and already touched: completed ones are zeroed in CUPTI's own thread and kept for
 * the next request (a few; the rest are freed). CUPTI is told
 * (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) by cupti.c. */
#ifndef GPUJIT_INJECT_BUFFERS_H
#define GPUJIT_INJECT_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "inject/record.h"

/** Bytes of each activity buffer. */
#define GJI_BUFFER_BYTES (4u << 20)

/** Make `n` zeroed buffers ready, their pages touched (at start, not in a launch). */
GJI_HIDDEN void gji_buffers_prepare(int n);
/** CUPTI's request (CUpti_BuffersCallbackRequestFunc): a zeroed buffer. */
GJI_HIDDEN void gji_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records);
/** A completed buffer, read: zeroed and kept for the next request, or freed. */
GJI_HIDDEN void gji_buffer_give_back(uint8_t *buffer);

#endif
