/* NVRTC's own phases in gpujit's traces: per-compile trace files, phase times, merging. */
#ifndef GPUJIT_TRACE_NVRTC_H
#define GPUJIT_TRACE_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

#include "gpujit/trace.h"

/** Whether the trace wants NVRTC's phases (a NULL trace wants nothing). */
bool gpujit__trace_wants_nvrtc(const gpujit_trace *trace);
/** A fresh, unique base path for one NVRTC --fdevice-time-trace (NVRTC appends ".json"). */
int gpujit__trace_nvrtc_path(gpujit_trace *trace, char *out, size_t size);
/**
 * Read NVRTC's trace written for `base` (base + ".json"), delete it, and merge its events onto
 * the calling thread's track, rebased to start at `start_us` and clamped to end by `end_us`.
 * Always removes the file; a missing or malformed file is logged and skipped. Adds the
 * front end, optimizer, codegen and ptxas durations (ms) to phase_ms when it is not NULL.
 */
void gpujit__trace_merge_nvrtc(gpujit_trace *trace, const char *base, double start_us, double end_us,
                               double phase_ms[4]);

#endif
