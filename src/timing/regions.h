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
  uint32_t corr;       /* CUPTI timer, tied by callback: the driver call's correlation id (0: none came) */
  struct gpujit_loaded *owner; /* a kernel's module (kernel regions), else NULL */
} gpujit__record;

typedef struct gpujit__rwin gpujit__rwin;

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
  bool by_callback;     /* CUPTI: this window's activities tied by the callback's correlation ids */
  gpujit__cupti_rec *acts; /* CUPTI: activities of the records, by record */
  size_t nacts, capacts;
  uint64_t dropped;     /* CUPTI: records it reported dropped, ever */
  /* kernel regions read by every timer (timing/kregions_watch.c): each timer joins a window of
   * its own; the modules launched while any is open were reset at their first such launch */
  gpujit__rwin **wins;  /* the open windows, in the order they opened */
  size_t nwins, capwins;
  struct gpujit_loaded **active; /* modules reset in the windows open now */
  size_t nactive, capactive;
  gpujit__rwin *rtimer[GPUJIT__MAX_TIMING_DEPTH]; /* each open timed region's window */
  gpujit__rwin **plain; /* gpujit_timing_regions_begin's windows, innermost last */
  size_t nplain, capplain;
  gpujit__rwin *last;   /* the last window closed: its tables */
} gpujit__timing;

/* A module with regions in a window: a mark of its buffer where it was already recording when the
 * window opened, its launches and kernel time there, and once the window closed its table. */
typedef struct gpujit__rwatch_mod {
  struct gpujit_loaded *l;
  uint64_t *mark;
  unsigned launches;
  double kernel_ms;
  gpujit_region_report *report;
} gpujit__rwatch_mod;

struct gpujit__rwin {
  gpujit__rwatch_mod *mods;
  size_t nmods, capmods;
};

/** The device's timing state: made, and installed as its activity hooks, on first use. */
int gpujit__timing_of(gpujit_device *dev, gpujit__timing **out);
/** An event from the pool (or a new one); give it back when done. */
int gpujit__timing_take_event(gpujit__timing *t, CUevent *out);
void gpujit__timing_give_event(gpujit__timing *t, CUevent e);

/** Open a window of the caller's own (nested in any open ones): each module recording in the open
 *  ones is marked (waiting for the device's stream), so the window reads only its own events;
 *  a module first launched later is reset then. Turns the hooks on. @return 0, GPUJIT_ENOMEM,
 *  GPUJIT_ECUDA. */
int gpujit__rwatch_open(gpujit__timing *t, gpujit__rwin **out);
/** A kernel of `l` is about to be launched (any module; nothing unless a window is open and `l`
 *  records regions): counted in every open window. */
void gpujit__rwatch_launch(gpujit__timing *t, struct gpujit_loaded *l);
/** Add a kernel's GPU time to its module's in window `w` (NULL: nothing). */
void gpujit__rwatch_time(gpujit__rwin *w, const struct gpujit_loaded *l, double ms);
/** Add the kernel results among `res` of each of w's modules' kernels (by name, on this device)
 *  to its kernel time: what a capture's records give. */
void gpujit__rwatch_time_results(gpujit__timing *t, gpujit__rwin *w, const gpujit_timing_result *res, size_t n);
/** Close window `w` (NULL: nothing): read each of its modules' tables (the device's stream
 *  synchronised), which become the device's last (gpujit_timing_regions). `sample_ms`: for a
 *  benchmark the samples' total, as the kernel time of a module timed by no record. @return 0 or
 *  the first read's error (closed either way). */
int gpujit__rwatch_close(gpujit__timing *t, gpujit__rwin *w, double sample_ms);
/** A module goes away: drop it (and its tables). */
void gpujit__rwatch_forget(gpujit__timing *t, struct gpujit_loaded *l);
/** A mark of a module's buffer (claimed, lost, then each slot's word), after the work issued
 *  before: waits for the device's stream. *out: the caller's to free. */
int gpujit__regions_mark(struct gpujit_loaded *l, uint64_t **out);
/** gpujit_loaded_regions_read of the events written since `mark` (NULL: since the reset). */
int gpujit__regions_read_since(gpujit_region_report **out, struct gpujit_loaded *l, const uint64_t *mark,
                               double kernel_ms, unsigned launches);
/** Free the tables. */
void gpujit__rwatch_free(gpujit__timing *t);

#endif
