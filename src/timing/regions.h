/* The event-timing layer's state per device: timed regions recorded through run's activity
 * hooks, and the event pool the benchmark shares. */
#ifndef GPUJIT_TIMING_REGIONS_H
#define GPUJIT_TIMING_REGIONS_H

#include "run/device.h"
#include "gpujit/regions.h"
#include "timing/cupti.h"

#define GPUJIT__MAX_TIMING_DEPTH 16

typedef struct gpujit__record {
  gpujit_activity_kind kind;
  char name[128];
  CUevent start, end; /* events timer */
  uint64_t order, bytes;
  double host_us, launch_us;
  size_t first_act, nacts; /* CUPTI timer: its activities in the timing's `acts` */
  struct gpujit_loaded *owner; /* a kernel's module (kernel regions), else NULL */
} gpujit__record;

typedef struct gpujit__rwatch_mod gpujit__rwatch_mod;

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
  /* kernel regions of the modules launched in a window: timing/kregions_watch.c. Every timer
   * kind joins the device's one window (the outermost timed region, a benchmark's samples, a
   * capture, a host timer); the last to leave closes it and reads the tables */
  unsigned rwatch;      /* joins of the open window; 0: none open */
  unsigned rwatch_plain; /* ... of them by gpujit_timing_regions_begin (host timers, captures) */
  bool rwatch_timer;    /* ... one of them the outermost timed region's */
  gpujit__rwatch_mod *rmods; /* the window's modules with regions, then the last window's tables */
  size_t nrmods, caprmods;
} gpujit__timing;

/* A module with regions launched in a window: its launches and kernel time there, and once the
 * window closed its table. */
typedef struct gpujit__rwatch_mod {
  struct gpujit_loaded *l;
  unsigned launches;
  double kernel_ms;
  gpujit_region_report *report;
} gpujit__rwatch_mod;

/** The device's timing state: made, and installed as its activity hooks, on first use. */
int gpujit__timing_of(gpujit_device *dev, gpujit__timing **out);
/** An event from the pool (or a new one); give it back when done. */
int gpujit__timing_take_event(gpujit__timing *t, CUevent *out);
void gpujit__timing_give_event(gpujit__timing *t, CUevent e);

/** Join the device's window, opening it when none is open (the last window's tables are then
 *  forgotten; each module with regions is reset at its first launch in it). Turns the hooks on. */
void gpujit__rwatch_open(gpujit__timing *t);
/** A kernel of `l` is about to be launched (any module; nothing unless a window is open and `l`
 *  records regions). */
void gpujit__rwatch_launch(gpujit__timing *t, struct gpujit_loaded *l);
/** Add a kernel's GPU time to its module's (while the window is open). */
void gpujit__rwatch_time(gpujit__timing *t, const struct gpujit_loaded *l, double ms);
/** Add the kernel results among `res` of each window module's kernels (by name, on this device)
 *  to its kernel time: what a capture's records give. */
void gpujit__rwatch_time_results(gpujit__timing *t, const gpujit_timing_result *res, size_t n);
/** 1 when one leave closes the window: the caller is its last join, whose times count. */
int gpujit__rwatch_last(const gpujit__timing *t);
/** Leave the window; the last to leave closes it and reads each module's table (the device's
 *  stream synchronised). `sample_ms`: for a benchmark the samples' total, as the kernel time of a
 *  module timed by no record. @return 1 closed, 0 still open (or none was), or the first read's
 *  error (closed). */
int gpujit__rwatch_close(gpujit__timing *t, double sample_ms);
/** A module goes away: drop it (and its table). */
void gpujit__rwatch_forget(gpujit__timing *t, struct gpujit_loaded *l);
/** Free the tables. */
void gpujit__rwatch_free(gpujit__timing *t);

#endif
