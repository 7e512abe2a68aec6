/* The trace sink's insides, shared with the producers inside trace/ (NVRTC merging). */
#ifndef GPUJIT_TRACE_SINK_H
#define GPUJIT_TRACE_SINK_H

#include <cjson/cJSON.h>
#include <pthread.h>

#include <stdbool.h>
#include <stdint.h>

#include "gpujit/trace.h"

typedef struct trace_event {
  char ph;      /* 'X', 'i', 'C'; 0 for a raw event loaded from a file */
  bool open;    /* a span not yet ended */
  char *name;
  char *cat;
  double ts, dur;
  int64_t tid;
  cJSON *args;  /* owned; NULL when none. For raw events: the whole event. */
} trace_event;

/** Turns a deferred payload into events; called under the trace's lock. */
typedef void (*gpujit__trace_expand_fn)(gpujit_trace *t, void *payload);

/* Work kept off the recording path: expanded into events when the trace is read or written. */
typedef struct trace_pending {
  gpujit__trace_expand_fn expand;
  void (*release)(void *payload);
  void *payload;
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
  struct gpujit_trace *fork_prev, *fork_next; /* the live traces, whose locks fork() takes (sink.c) */
  bool fork_listed;
};

/* Track ids that are not threads. Perfetto's JSON importer reads pid and tid as unsigned 32-bit
 * numbers (a larger one counts as absent and the event lands on the process's own track); a
 * kernel thread id is below PID_MAX_LIMIT (2^22): virtual tracks take 2^30 and up. */
#define GPUJIT__TRACE_VIRTUAL_TID ((int64_t)1 << 30)
#define GPUJIT__TRACE_MAX_ID ((int64_t)UINT32_MAX)

/* Under the trace's lock (trace.c): */
/** Make sure `tid` has a track, named `name` (NULL: "main" or "worker N"). */
int gpujit__trace_ensure_track(gpujit_trace *t, int64_t tid, const char *name);
/** The track named `name`, made with a virtual id if there is none. @return 0 or GPUJIT_ENOMEM. */
int gpujit__trace_named_track(gpujit_trace *t, const char *name, int64_t *out_tid);
/** Append an event; returns its 1-based id, 0 when out of memory. ph 0 is a raw loaded event. */
uint64_t gpujit__trace_push_event(gpujit_trace *t, char ph, const char *cat, const char *name, double ts, double dur,
                                  int64_t tid);
/**
 * Keep `payload` until the trace is next read or written, then call `expand` (under the lock)
 * and `release`. On failure (out of memory) `release` is called at once and the events are lost.
 */
void gpujit__trace_defer(gpujit_trace *t, gpujit__trace_expand_fn expand, void (*release)(void *),
                         void *payload);
/** The calling thread's track id (its kernel tid; never 0). */
int64_t gpujit__thread_tid(void);

/**
 * Merge another process's trace (a project worker's) into `t`: its events move onto `t`'s process,
 * the thread `pid` onto `track`, other threads onto tracks named "PREFIX thread TID" beside it.
 * @return 0, GPUJIT_EPARSE or GPUJIT_ENOMEM.
 */
int gpujit__trace_merge_process(gpujit_trace *t, const char *json, size_t len, int64_t pid, int64_t track,
                                const char *thread_prefix);

#endif
