/* A module's compile profile: NVRTC's phases, headers, templates and functions, and its times.
 * Read from traces (events.c), kept in cache entries, replayed into the trace of a cache hit. */
#ifndef GPUJIT_TRACE_COMPILE_PROFILE_H
#define GPUJIT_TRACE_COMPILE_PROFILE_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "trace/rows.h"

/** The tables a profile holds: gpujit_trace_table's, less the modules table. */
#define GPUJIT__PROFILE_TABLES GPUJIT_TRACE_MODULES

/** The category of events replayed from a recorded profile. */
#define GPUJIT__RECORDED_CAT "gpujit.recorded"
/** The recorded span's name prefix; its args hold the profile under "profile". */
#define GPUJIT__RECORDED_SPAN "recorded compile "

typedef struct gpujit__profile {
  char *module;
  gpujit__rows tables[GPUJIT__PROFILE_TABLES];
  double build_us;    /* the build's wall time; for a recorded profile, the build that recorded it */
  double compile_us;  /* in NVRTC and nvJitLink; < 0: not measured (a hit without a recorded profile) */
  double overhead_us; /* gpujit's own time in the build (on a hit, all of it) */
  bool hit;           /* the build was a cache hit */
  bool recorded;      /* the tables and compile time are a cache entry's record */
  char *recorded_at;  /* when it was recorded (ISO 8601, UTC) */
  char *toolkit;      /* on which toolkit ("NVRTC 13.0") */
  char *key;          /* the cache entry's key */
  char *file;         /* the trace it was read from (borrowed by analyses) */
  double floor_us[GPUJIT__PROFILE_TABLES]; /* a stored profile that left rows out: the largest
                                              left out (a row below it may be missing); else 0 */
} gpujit__profile;

void gpujit__profile_free(gpujit__profile *p);
/** Move `from`'s tables and times into `to` (a recorded profile into the hit it belongs to). */
void gpujit__profile_take_record(gpujit__profile *to, gpujit__profile *from);

/** The stored form: JSON with each table's `top` largest rows (all when 0) and what was left
 *  out. Sorts `p`'s tables. @return NULL when out of memory. */
cJSON *gpujit__profile_to_cjson(gpujit__profile *p, size_t top);
/** Read the stored form; `what` names it in messages.
 *  @return 0, GPUJIT_EPARSE (message says what is wrong) or GPUJIT_ENOMEM. */
int gpujit__profile_from_cjson(gpujit__profile *p, const cJSON *j, const char *what);

/**
 * Write a recorded profile (its stored form, `json`) into a trace for a cache hit of `module`:
 * a track "recorded: MODULE" with a span "recorded compile MODULE" starting at `at_us` as long
 * as the recorded compile, its phases laid end to end beneath it, the profile in its args.
 * @return 0, GPUJIT_EPARSE (not a profile) or GPUJIT_ENOMEM.
 */
int gpujit__trace_add_recorded(gpujit_trace *t, const char *module, const char *json, size_t len, double at_us);
/** Note in a trace that a cache hit of `module` has no recorded profile, and why. */
int gpujit__trace_add_unrecorded(gpujit_trace *t, const char *module, const char *why);

#endif
