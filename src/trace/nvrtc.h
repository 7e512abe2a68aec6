/* NVRTC's own phases in gpujit's traces: per-compile trace files, phase times, merging. */
#ifndef GPUJIT_TRACE_NVRTC_H
#define GPUJIT_TRACE_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "gpujit/trace.h"

/** Whether the trace wants NVRTC's phases (a NULL trace wants nothing). */
bool gpujit__trace_wants_nvrtc(const gpujit_trace *trace);
/** A fresh, unique base path for one NVRTC --fdevice-time-trace (NVRTC appends ".json"), in the
 *  trace's temp directory, or $TMPDIR (else /tmp) when `trace` is NULL. */
int gpujit__trace_nvrtc_path(gpujit_trace *trace, char *out, size_t size);
/**
 * Read NVRTC's trace written for `base` (base + ".json"), delete it, and merge its events onto
 * the calling thread's track, rebased to start at `start_us` and clamped to end by `end_us`.
 * Always removes the file; a missing or malformed file is logged and skipped. Adds the
 * front end, optimizer, codegen and ptxas durations (ms) to phase_ms when it is not NULL.
 */
void gpujit__trace_merge_nvrtc(gpujit_trace *trace, const char *base, double start_us, double end_us,
                               double phase_ms[4]);

/** Read NVRTC's trace written for `base` (base + ".json") into `out` and delete it. */
int gpujit__nvrtc_trace_take(gpujit__buf *out, const char *base);
/** gpujit__trace_merge_nvrtc() on a trace already read: takes `text` over (`trace` may be NULL:
 *  then only the phases are added up). */
void gpujit__trace_merge_nvrtc_text(gpujit_trace *trace, gpujit__buf *text, double start_us, double end_us,
                                    double phase_ms[4]);

/** Reports one header NVRTC processed and the header that included it (NULL: the source). */
typedef int (*gpujit__nvrtc_header_cb)(const char *path, const char *includer, void *payload);
/** Every "Processing Header File" event of an NVRTC trace, in order, with its includer (the
 *  enclosing such event). A non-zero return from `cb` stops and is returned.
 *  @return 0, GPUJIT_EPARSE (not an NVRTC trace), GPUJIT_ENOMEM. */
int gpujit__nvrtc_trace_headers(const char *json, size_t len, gpujit__nvrtc_header_cb cb, void *payload);

#endif
