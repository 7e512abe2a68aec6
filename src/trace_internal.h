/* Internal trace hooks used by the compile pipeline (NVRTC phase merging). */
#ifndef GPUJIT_TRACE_INTERNAL_H
#define GPUJIT_TRACE_INTERNAL_H

#include <cjson/cJSON.h>
#include <pthread.h>

#include "gpujit/trace.h"
#include "internal.h"

typedef struct trace_event {
  char ph;      /* 'X', 'i', 'C'; 0 for a raw event loaded from a file */
  bool open;    /* a span not yet ended */
  char *name;
  char *cat;
  double ts, dur;
  int64_t tid;
  cJSON *args;  /* owned; NULL when none. For raw events: the whole event. */
} trace_event;

typedef struct trace_pending {
  char *json; /* an NVRTC trace file's text, not yet turned into events */
  size_t len;
  double start, end;
  int64_t tid;
} trace_pending;

typedef struct trace_track {
  int64_t tid;
  char *name;
} trace_track;

struct gpujit_trace {
  pthread_mutex_t lock;
  trace_event *events;
  size_t count, cap;
  trace_track *tracks;
  size_t tracks_count, tracks_cap;
  size_t workers;
  int64_t next_virtual_tid;
  int64_t pid;
  char *process_name;
  char *tmp_dir;
  int nvrtc_phases;
  unsigned nvrtc_counter;
  cJSON *meta;
  trace_pending *pending;
  size_t npending, cappending;
};

/* Under the trace's lock (trace.c): */
/** Make sure `tid` has a track, named `name` (NULL: "main" or "worker N"). */
int gpujit__trace_ensure_track(gpujit_trace *t, int64_t tid, const char *name);
/** Append an event; returns its 1-based id, 0 when out of memory. ph 0 is a raw loaded event. */
uint64_t gpujit__trace_push_event(gpujit_trace *t, char ph, const char *cat, const char *name, double ts, double dur,
                                  int64_t tid);
/** Turn the NVRTC trace texts kept since the last flush into events (trace_nvrtc.c). */
void gpujit__trace_flush_pending(gpujit_trace *t);

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
/** The calling thread's track id (its kernel tid; never 0). */
int64_t gpujit__thread_tid(void);

#endif
