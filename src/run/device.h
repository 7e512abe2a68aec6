/* Devices, loaded modules and kernels, and the hook interface through which a layer above (the
 * timing layer) watches each activity: run calls hooks, never the layer behind them. */
#ifndef GPUJIT_RUN_DEVICE_H
#define GPUJIT_RUN_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "driver/driver.h"
#include "gpujit/run.h"
#include "gpujit/timing.h"

struct gpujit_loaded;

/** Called around every activity gpujit enqueues on a device's stream. */
typedef struct gpujit__activity_hooks {
  /** Before the activity; returns a token for `after`, or NULL to let it go unwatched. `owner`:
   *  a kernel's module, NULL for other activities. */
  void *(*before)(gpujit_device *dev, void *payload, gpujit_activity_kind kind, const char *name,
                  uint64_t bytes, struct gpujit_loaded *owner);
  /** After it was enqueued: `host_us` when the driver call began (the clock read once, after
   *  `before`), `launch_us` the host time the call took. */
  void (*after)(gpujit_device *dev, void *payload, void *token, double host_us, double launch_us);
  /** The device is being freed (its stream synchronised): release what the hooks hold. */
  void (*detach)(gpujit_device *dev, void *payload);
  /** A module of the device is being unloaded: forget what refers to it. */
  void (*unload)(gpujit_device *dev, void *payload, struct gpujit_loaded *loaded);
} gpujit__activity_hooks;

struct gpujit_device {
  const gpujit__driver *d;
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;      /* where work goes: `own`, or a stream set by the caller */
  CUstream own;
  gpujit_device_info info;
  bool capturing;       /* a graph capture is open: nothing may be recorded into the stream */
  char last_kernel[128];
  const char *last_src;  /* the kernel name last_kernel was copied from (a launch compares, not copies) */
  const gpujit__activity_hooks *hooks;
  void *hooks_payload;
  bool hooks_on;        /* call the hooks (a branch per activity when off) */
};

/* The current context, made so only where it may not be. Each thread notes the context gpujit
 * last made current on it and under which watch: while a layer above sees every change of a
 * thread's current context (timing/cupti_ctx.c, through CUPTI's callbacks, where gpujit holds CUPTI's
 * subscriber), gpujit__ctx_watching is that watch's number and a launch whose device's context
 * the note names makes no driver call for it; with no watch (0) every use sets it, as the program
 * may have changed it since. A driver call is what CUPTI's dispatch makes dear. */
typedef struct gpujit__ctx_note {
  CUcontext ctx;
  unsigned watch; /* the watch it was noted under; 0: none, never trusted */
} gpujit__ctx_note;
extern _Thread_local gpujit__ctx_note gpujit__ctx_noted;
extern unsigned gpujit__ctx_watching;

/** Make the device's context current on this thread, unless the watch vouches that it is. */
static inline void gpujit__ctx_use(gpujit_device *g)
{
  unsigned w = __atomic_load_n(&gpujit__ctx_watching, __ATOMIC_ACQUIRE);
  if (w && gpujit__ctx_noted.watch == w && gpujit__ctx_noted.ctx == g->ctx)
    return;
  if (g->d->cuCtxSetCurrent(g->ctx) == CUDA_SUCCESS) /* noted after the call: its own callback forgets */
    gpujit__ctx_noted = (gpujit__ctx_note){g->ctx, w};
}
/** A watch starts (every change of any thread's current context is reported from now on, through
 *  gpujit__ctx_changed) or ends. Notes made before a start are not trusted. */
void gpujit__ctx_watch(bool on);
/** A thread's current context changed (or may have): its note is forgotten; `every_thread` (a
 *  context destroyed or reset) forgets every thread's. */
void gpujit__ctx_changed(bool every_thread);

/** Install hooks (one set per device; NULL removes) with their payload; they start off. */
void gpujit__device_set_hooks(gpujit_device *dev, const gpujit__activity_hooks *hooks, void *payload);
/** Turn the installed hooks on or off. */
void gpujit__device_hooks_enable(gpujit_device *dev, bool on);

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
  /* kernel regions (gpujit/regions.cuh): the module's `gpujit_regions` state and the buffer bound
   * to it at load (run/kregions.c); state 0 where the module has none */
  gpujit_devptr regions_state, regions_events, regions_slots;
  uint64_t regions_capacity;            /* events: a whole number of chunks */
  unsigned regions_chunk, regions_nslots; /* events per chunk; hardware slots in the table */
  unsigned regions_abi, regions_scope; /* as the module's state says: an ABI not ours stays unbound */
};

/** Find a loaded module's `gpujit_regions` state and bind a buffer to it (no state: nothing). */
int gpujit__regions_bind(struct gpujit_loaded *l);
/**
 * Where a module's recorded events lie (no device needed): chunks [0, *used) of its buffer were
 * claimed, fill[c] events of chunk c are written (a slot's current chunk partly, the rest whole),
 * and the events dropped: each slot's count plus `lost`. `fill` has capacity / chunk entries.
 */
void gpujit__regions_layout(const uint64_t *slots, size_t nslots, uint64_t claimed, uint64_t lost, uint64_t capacity,
                            unsigned chunk, uint32_t *fill, uint64_t *used, uint64_t *kept, uint64_t *dropped);
/** Copy a loaded module's slots and counters back (waiting for its stream) and lay them out as
 *  gpujit__regions_layout does; *fill is the caller's to free. */
int gpujit__regions_tally(struct gpujit_loaded *l, uint32_t **fill, uint64_t *used, uint64_t *kept,
                          uint64_t *dropped);
/** Free the buffer bound to a loaded module. */
void gpujit__regions_unbind(struct gpujit_loaded *l);

struct gpujit_graph {
  gpujit_device *dev;
  CUgraph graph;
  CUgraphExec exec;
  char name[128];
};

#endif
