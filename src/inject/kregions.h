/* Kernel regions in any profiled program (kregions.c): a module that declares `gpujit_regions`
 * (gpujit/regions.cuh with GPUJIT_REGIONS), whoever compiled and loaded it, gets an event buffer
 * bound in its context; what it recorded is read back at a scheduled profile's active steps' ends,
 * at its unload, at its context's end and at the process's exit, and written summarised as
 * "kregions" records (and a bounded number of its calls as "kslices", for the trace). */
#ifndef GPUJIT_INJECT_KREGIONS_H
#define GPUJIT_INJECT_KREGIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "inject/record.h"

/** A module (or, `library`, a cuLibrary) was loaded in the calling thread's context: bound when it
 *  declares gpujit_regions. `image`: what the load was given (NULL: a file); a library is asked of
 *  the driver only where its image names the variable (asking loads it into the context), else at
 *  its first launch (gji_kregions_launched), which `launches_seen` says CUPTI's callbacks show. */
GJI_HIDDEN void gji_kregions_loaded(uint64_t handle, bool library, const void *image, bool launches_seen);
/** A function of module (library) `handle` is launched for the first time (launch_modules.c asks
 *  once per distinct function), in the launching thread's context: bound if not yet. */
GJI_HIDDEN void gji_kregions_launched(uint64_t handle, bool library);
/** A module or library is about to be unloaded: its regions read, its buffer freed. */
GJI_HIDDEN void gji_kregions_unload(uint64_t handle);
/** A context is about to be destroyed: the regions of its modules read, their buffers forgotten. */
GJI_HIDDEN void gji_kregions_context_ending(void *ctx);
/** A step boundary under a schedule (steps.c): `ended_active`, the step that ended was recorded
 *  (its events are read); `begins_active`, the one beginning now is (a first one empties the
 *  buffers: only the active steps' events are read). */
GJI_HIDDEN void gji_kregions_step(bool ended_active, bool begins_active);
/** How to know whether the step going on now is recorded (steps.c, from its constructor): a module
 *  bound outside the recorded steps starts closed. Unset: always. */
GJI_HIDDEN void gji_kregions_window_set(bool (*recorded_now)(void));
/** The process ends (or an in-process session stops): every module's regions read. */
GJI_HIDDEN void gji_kregions_finish(void);

#endif
