/* Symbol resolution for the injection library's own look-ups (resolve.c), below everything
 * that wraps: no file here is called back from it. */
#ifndef GPUJIT_INJECT_RESOLVE_H
#define GPUJIT_INJECT_RESOLVE_H

#include <stdbool.h>

#include "inject/record.h"

/* The compiler libraries the injection library watches (NVRTC, nvJitLink, libNVVM) are tracked
 * per loaded copy, each in a slot of its own: a process may load two NVRTC versions. */
#define GJI_SLOTS 4

typedef void *(*gji_dlsym_fn)(void *, const char *);

/** A loaded copy of a watched library: the first member of each wrapper's slot. */
typedef struct gji_lib {
  const void *base; /* where the copy is loaded; NULL: a free slot */
  char path[512];
  char suffix[16]; /* its versioned names' suffix ("_13_0"), "" none */
} gji_lib;

/** The slot among `n` (each `size` bytes, a gji_lib first) of the loaded copy that holds function
 *  `real`, made on first sight: under `lock`, its path and `suffix` set and `fill` called to
 *  resolve its functions. NULL: `real` lies in no loaded object (*index -1), or every slot is
 *  taken (*index n). */
GJI_HIDDEN void *gji_lib_slot(void *real, const char *suffix, void *slots, size_t size, int n, pthread_mutex_t *lock,
                              void (*fill)(void *slot), int *index);

/** The real dlsym (glibc's), for the injection library's own look-ups. */
GJI_HIDDEN void *gji_real_dlsym(void *handle, const char *name);
/** Function `name` of the loaded library at `path` (glibc's look-up, not wrapped): its
 *  versioned entry point "__NAME_SUFFIX" first when `suffix` is not "" (nvJitLink's). */
GJI_HIDDEN void *gji_sym_in(const char *path, const char *name, const char *suffix);
/** Whether `p` is in this library (its own export, not the function it stands in for). */
GJI_HIDDEN bool gji_is_self(const void *p);
/** The real function `name` for a call into this library's export from `caller`: what the
 *  caller's own scope resolves it to (its dependencies), else the next definition after this
 *  library's; NULL when there is none. */
GJI_HIDDEN void *gji_next_for(const void *caller, const char *name);

/** Whether `name` is a function this library wraps (NVRTC, nvJitLink, libNVVM, the driver's loads,
 *  CUPTI's take-over calls) (dlsym.c). */
GJI_HIDDEN bool gji_watched(const char *name);
/** The wrapper standing for `real`, the function `name` resolved to, or NULL where `real` stands
 *  (not watched, this library's own, no profile active) (dlsym.c). */
GJI_HIDDEN void *gji_wrap_symbol(const char *name, void *real);

/* For the exported dlsym (dlsym.c): */
/** Whether this library's constructor resolved the look-ups below. */
GJI_HIDDEN bool gji_resolved(void);
/** The next dlsym after this library's (another tool's, or glibc's), found with dlvsym alone:
 *  safe to ask before the constructor ran. */
GJI_HIDDEN gji_dlsym_fn gji_next_dlsym(void);
/** A look-up through that next dlsym, and through glibc's own. */
GJI_HIDDEN void *gji_first_dlsym(void *handle, const char *name);
GJI_HIDDEN void *gji_libc_dlsym(void *handle, const char *name);
/** RTLD_NEXT on behalf of `caller`: the first definition in an object loaded after the caller's
 *  (glibc would take this library as the caller). */
GJI_HIDDEN void *gji_next_after(const void *caller, const char *name);

#endif
