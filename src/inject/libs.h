/* The compiler libraries the injection library watches (NVRTC, nvJitLink, libNVVM), each loaded
 * copy in a slot of its own: a process may load two NVRTC versions, and a program handle is
 * always given back to the copy that made it. */
#ifndef GPUJIT_INJECT_LIBS_H
#define GPUJIT_INJECT_LIBS_H

#include "inject/record.h"

#define GJI_SLOTS 4

/** The real dlsym (glibc's), for the injection library's own look-ups. */
GJI_HIDDEN void *gji_real_dlsym(void *handle, const char *name);

/**
 * What `name` resolved to in the library that holds `real` should be replaced with, if it is a
 * function this library watches: the wrapper for that library's slot, or NULL (return `real`).
 */
GJI_HIDDEN void *gji_wrap_symbol(const char *name, void *real);

/** The wrapper of NVRTC's (nvrtc.c), nvJitLink's or libNVVM's (link.c) function `name` for the
 *  copy of the library holding `real`, or NULL when `name` is not one of those watched. */
GJI_HIDDEN void *gji_nvrtc_wrap(const char *name, void *real);
GJI_HIDDEN void *gji_link_wrap(const char *name, void *real);

/** The driver's functions this library watches when CUPTI does not (module loads), the ones by
 *  which a program takes CUPTI, and cuGetProcAddress (driver.c); NULL when `name` is none. */
GJI_HIDDEN void *gji_driver_wrap(const char *name, void *real);
/** Whether driver.c wraps `name`. */
GJI_HIDDEN bool gji_driver_watched(const char *name);

/** Function `name` of the loaded library at `path` (glibc's look-up, not wrapped): its
 *  versioned entry point "__NAME_SUFFIX" first when `suffix` is not "" (nvJitLink's). */
GJI_HIDDEN void *gji_sym_in(const char *path, const char *name, const char *suffix);

/** Whether `p` is in this library (its own export, not the function it stands in for). */
GJI_HIDDEN bool gji_is_self(const void *p);

/** The real function `name` for a call into this library's export from `caller`: what the
 *  caller's own scope resolves it to (its dependencies), else the next definition after this
 *  library's; NULL when there is none. */
GJI_HIDDEN void *gji_next_for(const void *caller, const char *name);

/** Whether this library's CUPTI subscriber records module loads (cupti.c). */
GJI_HIDDEN bool gji_cupti_records_loads(void);
/** The program is taking CUPTI (through `api`): flush what was recorded, disable this library's
 *  activity kinds, unsubscribe, and say so once. */
GJI_HIDDEN void gji_cupti_yield(const char *api);

#endif
