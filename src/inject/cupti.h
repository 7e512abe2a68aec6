/* The injection library's CUPTI subscriber (cupti.c), as the driver wrappers see it. */
#ifndef GPUJIT_INJECT_CUPTI_H
#define GPUJIT_INJECT_CUPTI_H

#include <stdbool.h>

#include "inject/record.h"

/** Whether this library's CUPTI subscriber records module loads. */
GJI_HIDDEN bool gji_cupti_records_loads(void);
/** The program is taking CUPTI (through `api`): flush what was recorded, disable this library's
 *  activity kinds, unsubscribe, and say so once. */
GJI_HIDDEN void gji_cupti_yield(const char *api);

/** What the steps (steps.c) tell the subscriber, set once before cuInit (its constructor). */
typedef struct gji_cupti_steps {
  bool (*cupti_now)(void);  /* CUPTI's activity on from cuInit (no schedule, or step 0 recorded) */
  bool (*scheduled)(void);  /* a schedule: the driver API's launch records, for steps' launches */
  /* the NVTX name (src 2) or kernel name fragment (src 3) that begins a step, or NULL */
  const char *(*marker)(int *src);
  void (*boundary)(int src); /* a marker was seen: a step begins */
} gji_cupti_steps;
GJI_HIDDEN void gji_cupti_steps_set(const gji_cupti_steps *s);

/** CUPTI on (a schedule's first recorded step): subscriber, callbacks, activity. Nothing before
 *  cuInit (InitializeInjection attaches then if steps.c wants it). @return false where CUPTI
 *  could not be set up (said in a note). */
GJI_HIDDEN bool gji_cupti_attach(void);
/** CUPTI off after a schedule's recorded steps: flushed, activity off, unsubscribed; with
 *  `finalize` (no later cycle) cuptiFinalize'd too, the uninstrumented launch cost back. */
GJI_HIDDEN void gji_cupti_detach(bool finalize);

/** In-process: CUPTI attached now as the schedule wants it (the driver loaded if it is there; no
 *  driver or no CUPTI: said in a note). */
GJI_HIDDEN void gji_cupti_inproc_start(void);
/** In-process: flushed, unsubscribed, finalized; nothing of CUPTI's left on. */
GJI_HIDDEN void gji_cupti_inproc_stop(void);

#endif
