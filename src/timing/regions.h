/* The event-timing layer's state per device: timed regions recorded through run's activity
 * hooks, and the event pool the benchmark shares. */
#ifndef GPUJIT_TIMING_REGIONS_H
#define GPUJIT_TIMING_REGIONS_H

#include "run/device.h"
#include "timing/cupti.h"

#define GPUJIT__MAX_TIMING_DEPTH 16

typedef struct gpujit__record {
  gpujit_activity_kind kind;
  char name[128];
  CUevent start, end; /* events timer */
  uint64_t order, bytes;
  double host_us, launch_us;
  size_t first_act, nacts; /* CUPTI timer: its activities in the timing's `acts` */
} gpujit__record;

typedef struct gpujit__timing {
  gpujit_device *dev;
  unsigned depth;
  unsigned filters[GPUJIT__MAX_TIMING_DEPTH];
  size_t starts[GPUJIT__MAX_TIMING_DEPTH];
  unsigned any_filter; /* union of the open regions' filters */
  gpujit__record *recs;
  size_t nrec, caprec;
  CUevent *pool;
  size_t npool, cappool;
  uint64_t order;
  CUevent ref_event;
  double ref_host_us;
  gpujit_timing_report_cb report;
  void *report_payload;
  gpujit_devptr flush_buf; /* the benchmark's L2 flush buffer */
  size_t flush_bytes;
  gpujit_timer_source source;
  uint64_t id_base;     /* CUPTI: the external id of recs[0] (ids follow the records) */
  gpujit__cupti_rec *acts; /* CUPTI: activities of the records, by record */
  size_t nacts, capacts;
  uint64_t dropped;     /* CUPTI: records it reported dropped, ever */
} gpujit__timing;

/** The device's timing state: made, and installed as its activity hooks, on first use. */
int gpujit__timing_of(gpujit_device *dev, gpujit__timing **out);
/** An event from the pool (or a new one); give it back when done. */
int gpujit__timing_take_event(gpujit__timing *t, CUevent *out);
void gpujit__timing_give_event(gpujit__timing *t, CUevent e);

#endif
