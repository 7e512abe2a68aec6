/*
 * dlsym, wrapped: frameworks (CuPy, PyTorch's jiterator, Numba) resolve NVRTC, nvJitLink and
 * libNVVM at run time with dlopen + dlsym, past any symbol LD_PRELOAD puts first. What they get
 * is the wrapper of the copy of the library they asked (nvrtc.c, link.c, driver.c). Every other
 * look-up is glibc's own; RTLD_NEXT keeps its meaning (the object after the caller's).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "inject/driver.h"
#include "inject/link.h"
#include "inject/nvrtc.h"
#include "inject/record.h"
#include "inject/resolve.h"

/* This thread is inside this library's dlsym: another tool's dlsym wrapper (Nsight Compute's)
 * that calls the first dlsym it finds comes back here, and must go to glibc, not round again. */
static __thread int inside;

bool gji_watched(const char *name)
{
  return !strncmp(name, "nvrtc", 5) || !strncmp(name, "nvJitLink", 9) || !strncmp(name, "__nvJitLink", 11) ||
         !strncmp(name, "nvvm", 4) || gji_driver_watched(name);
}

/* What `name` resolved to (`real`) is replaced with, if it is a function this library watches:
 * the wrapper for the slot of the library that holds `real`, or NULL (`real` stands). */
void *gji_wrap_symbol(const char *name, void *real)
{
  if (!real || !name || !gji_watched(name) || !gji_active())
    return NULL;
  if (gji_is_self(real))
    return NULL; /* this library's own definition: already the wrapper */
  if (!strncmp(name, "nvrtc", 5))
    return gji_nvrtc_wrap(name, real);
  if (!strncmp(name, "cu", 2))
    return gji_driver_wrap(name, real);
  return gji_link_wrap(name, real);
}

__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
  const void *caller = __builtin_return_address(0);
  void *r, *w;
  if (!gji_resolved()) { /* another library's constructor, before ours */
    gji_dlsym_fn next = gji_next_dlsym();
    return next ? next(handle, name) : NULL;
  }
  if (handle == RTLD_NEXT)
    r = gji_next_after(caller, name);
  else if (inside) /* come back through another tool's dlsym: glibc answers */
    return gji_libc_dlsym(handle, name);
  else {
    inside++;
    r = gji_first_dlsym(handle, name);
    inside--;
  }
  /* a global look-up that found only this library's export: the library it stands in for is
   * not loaded, and the program must see that (it may be asking whether CUDA is there) */
  if (gji_is_self(r) && gji_watched(name) && !gji_libc_dlsym(RTLD_NEXT, name))
    return NULL;
  w = gji_wrap_symbol(name, r);
  return w ? w : r;
}
