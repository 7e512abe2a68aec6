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

/** The real function `name` for a symbol this library also exports (the program linked the
 *  library directly): the next definition after this library's. */
GJI_HIDDEN void *gji_next(const char *name);

#endif
