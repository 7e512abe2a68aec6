/*
 * dlsym, wrapped: frameworks (CuPy, PyTorch's jiterator, Numba) resolve NVRTC, nvJitLink and
 * libNVVM at run time with dlopen + dlsym, past any symbol LD_PRELOAD puts first. Every other
 * look-up is glibc's own; RTLD_NEXT keeps its meaning (the object after the caller's).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "inject/libs.h"

typedef void *(*dlsym_fn)(void *, const char *);
/* The next dlsym after this library's (another tool's wrapper, or glibc's), and glibc's own. */
static dlsym_fn real_dlsym_fn, libc_dlsym;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static Dl_info self;
/* This thread is inside this library's dlsym: another tool's dlsym wrapper (Nsight Compute's)
 * that calls the first dlsym it finds comes back here, and must go to glibc, not round again. */
static __thread int inside;

static dlsym_fn versioned(void *handle)
{
  dlsym_fn f = (dlsym_fn)dlvsym(handle, "dlsym", "GLIBC_2.34");
  return f ? f : (dlsym_fn)dlvsym(handle, "dlsym", "GLIBC_2.2.5");
}

/* Set once this library's constructor resolved everything (resolve() calls dlopen, which another
 * tool may wrap and not be ready to serve yet). */
static volatile int resolved;

/* The next dlsym, found with dlvsym alone: what a look-up made before this library's constructor
 * ran is given. Nsight Compute's interceptor asks from its own constructor, which runs first; had
 * it been answered through resolve(), its not yet ready dlopen wrapper would have spun forever
 * (measured: the program hung under ncu with this library preloaded). */
static dlsym_fn next_dlsym(void)
{
  dlsym_fn f = __atomic_load_n(&real_dlsym_fn, __ATOMIC_ACQUIRE);
  if (!f) {
    f = versioned(RTLD_NEXT);
    __atomic_store_n(&real_dlsym_fn, f, __ATOMIC_RELEASE);
  }
  return f;
}

static void resolve(void)
{
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  next_dlsym();
  libc_dlsym = libc ? versioned(libc) : NULL;
  if (!libc_dlsym)
    libc_dlsym = real_dlsym_fn;
  if (libc)
    dlclose(libc);
  dladdr((void *)resolve, &self);
  __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}

/* Resolved before the program runs, while the process has one thread. */
__attribute__((constructor)) static void resolve_early(void)
{
  pthread_once(&once, resolve);
}

void *gji_real_dlsym(void *handle, const char *name)
{
  pthread_once(&once, resolve);
  return libc_dlsym ? libc_dlsym(handle, name) : NULL;
}

static bool watched(const char *name)
{
  return !strncmp(name, "nvrtc", 5) || !strncmp(name, "nvJitLink", 9) || !strncmp(name, "__nvJitLink", 11) ||
         !strncmp(name, "nvvm", 4) || gji_driver_watched(name);
}

void *gji_sym_in(const char *path, const char *name, const char *suffix)
{
  char versioned_name[128];
  void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD), *f = NULL;
  if (!h)
    return NULL;
  if (suffix[0]) {
    snprintf(versioned_name, sizeof(versioned_name), "__%s%s", name, suffix);
    f = gji_real_dlsym(h, versioned_name);
  }
  if (!f)
    f = gji_real_dlsym(h, name);
  dlclose(h);
  return f;
}

bool gji_is_self(const void *p)
{
  Dl_info info;
  return p && dladdr(p, &info) && info.dli_fbase == self.dli_fbase;
}

void *gji_next_for(const void *caller, const char *name)
{
  Dl_info info;
  struct link_map *lm = NULL;
  void *f = NULL, *h;
  pthread_once(&once, resolve);
  if (!libc_dlsym)
    return NULL;
  /* the caller's own scope first: a library loaded RTLD_LOCAL finds its own dependencies */
  if (dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm && lm->l_name && lm->l_name[0] &&
      (h = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD))) {
    f = libc_dlsym(h, name);
    dlclose(h);
  }
  if (!f || gji_is_self(f))
    f = libc_dlsym(RTLD_NEXT, name);
  return gji_is_self(f) ? NULL : f;
}

void *gji_wrap_symbol(const char *name, void *real)
{
  Dl_info info;
  if (!real || !name || !watched(name) || !gji_active())
    return NULL;
  if (dladdr(real, &info) && info.dli_fbase == self.dli_fbase)
    return NULL; /* this library's own definition: already the wrapper */
  if (!strncmp(name, "nvrtc", 5))
    return gji_nvrtc_wrap(name, real);
  if (!strncmp(name, "cu", 2))
    return gji_driver_wrap(name, real);
  return gji_link_wrap(name, real);
}

/* RTLD_NEXT on behalf of the caller: the first definition in an object loaded after the
 * caller's (glibc would take this library as the caller). */
static void *next_after(const void *caller, const char *name)
{
  Dl_info info;
  struct link_map *lm = NULL;
  if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
    return NULL;
  for (lm = lm->l_next; lm; lm = lm->l_next) {
    void *h, *f;
    if (!lm->l_name || !lm->l_name[0] || lm->l_addr == (ElfW(Addr))self.dli_fbase)
      continue;
    if (!(h = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD)))
      continue;
    f = libc_dlsym(h, name);
    dlclose(h);
    if (f)
      return f;
  }
  return NULL;
}

__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
  const void *caller = __builtin_return_address(0);
  void *r, *w;
  if (!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)) { /* another library's constructor, before ours */
    dlsym_fn next = next_dlsym();
    return next ? next(handle, name) : NULL;
  }
  if (!real_dlsym_fn || !libc_dlsym)
    return NULL;
  if (handle == RTLD_NEXT)
    r = next_after(caller, name);
  else if (inside) /* come back through another tool's dlsym: glibc answers */
    return libc_dlsym(handle, name);
  else {
    inside++;
    r = real_dlsym_fn(handle, name);
    inside--;
  }
  /* a global look-up that found only this library's export: the library it stands in for is
   * not loaded, and the program must see that (it may be asking whether CUDA is there) */
  if (gji_is_self(r) && watched(name) && !libc_dlsym(RTLD_NEXT, name))
    return NULL;
  w = gji_wrap_symbol(name, r);
  return w ? w : r;
}
