/* A trace's complete events, nested per track and split into the modules that built them. */
#ifndef GPUJIT_TRACE_EVENTS_H
#define GPUJIT_TRACE_EVENTS_H

#include <stddef.h>

#include "trace/compile_profile.h"

/** What one trace holds: a profile per module build (or cache hit), and the rest. */
typedef struct gpujit__trace_read {
  gpujit__profile *modules;
  size_t count, cap;
  gpujit__profile other; /* events no module build encloses */
  size_t events;         /* complete events read */
  bool gpujit;           /* written by gpujit (not a raw NVRTC/nvcc trace) */
} gpujit__trace_read;

/**
 * Read a trace: gpujit's (modules from "build NAME" spans, and "look up NAME" spans that hit,
 * with recorded profiles of cache hits), or a raw NVRTC/nvcc --fdevice-time-trace file (one
 * module, named by the source its front end compiled). `name` names the trace in messages.
 * @return 0, GPUJIT_EPARSE (message names the trace and the problem) or GPUJIT_ENOMEM.
 */
int gpujit__trace_read_json(gpujit__trace_read *out, const char *name, const char *json, size_t len);
void gpujit__trace_read_free(gpujit__trace_read *r);

/** Add the rows of one raw NVRTC trace (a compile's --fdevice-time-trace) to `p`'s tables. */
int gpujit__profile_add_nvrtc(gpujit__profile *p, const char *json, size_t len);

#endif
