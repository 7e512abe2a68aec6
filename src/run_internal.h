/* Devices, loaded modules and kernels, shared by run.c and timing.c. */
#ifndef GPUJIT_RUN_INTERNAL_H
#define GPUJIT_RUN_INTERNAL_H

#include "driver.h"
#include "gpujit/timing.h"
#include "compile.h"

#define GPUJIT__MAX_TIMING_DEPTH 16

typedef struct gpujit__record {
  gpujit_activity_kind kind;
  char name[128];
  CUevent start, end;
  uint64_t order, bytes;
  double host_us, launch_us;
} gpujit__record;

struct gpujit_device {
  const gpujit__driver *d;
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  gpujit_device_info info;
  /* timing layer */
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
  bool capturing;
  char last_kernel[128];
  gpujit_devptr flush_buf;
  size_t flush_bytes;
};

struct gpujit_kernel {
  struct gpujit_loaded *owner;
  CUfunction fn;
  char *name;
  gpujit_kernel_attrs attrs;
  int dyn_shared_set; /* dynamic shared memory opted in so far */
};

struct gpujit_loaded {
  gpujit_device *dev;
  CUmodule mod;
  double load_ms;
  struct gpujit_kernel *kernels;
  size_t count;
  gpujit__strvec exprs, lowered;
};

struct gpujit_graph {
  gpujit_device *dev;
  CUgraph graph;
  CUgraphExec exec;
  char name[128];
};

/** Timing hooks around one activity; both are no-ops (and cost a branch) with no open region. */
gpujit__record *gpujit__timing_pre(gpujit_device *dev, gpujit_activity_kind kind, const char *name,
                                   uint64_t bytes);
void gpujit__timing_post(gpujit_device *dev, gpujit__record *rec, double launch_us);
/** Release the timing layer's events. */
void gpujit__timing_release(gpujit_device *dev);


#endif
