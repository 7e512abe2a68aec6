/*
 * Symbol resolution for the injection library's own look-ups, below everything that wraps: the
 * next dlsym (another tool's, or glibc's) and glibc's own, found once at load; a function in one
 * loaded copy of a library; whether an address is this library's; RTLD_NEXT for a caller.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "inject/resolve.h"

/* The next dlsym after this library's (another tool's wrapper, or glibc's), and glibc's own. */
static gji_dlsym_fn real_dlsym_fn, libc_dlsym;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static Dl_info self;

static gji_dlsym_fn versioned(void *handle)
{
  gji_dlsym_fn f = (gji_dlsym_fn)dlvsym(handle, "dlsym", "GLIBC_2.34");
  return f ? f : (gji_dlsym_fn)dlvsym(handle, "dlsym", "GLIBC_2.2.5");
}

/* Set once this library's constructor resolved everything (resolve() calls dlopen, which another
 * tool may wrap and not be ready to serve yet). */
static volatile int resolved;

/* The next dlsym, found with dlvsym alone: what a look-up made before this library's constructor
 * ran is given. Nsight Compute's interceptor asks from its own constructor, which runs first; had
 * it been answered through resolve(), its not yet ready dlopen wrapper would have spun forever
 * (measured: the program hung under ncu with this library preloaded). */
gji_dlsym_fn gji_next_dlsym(void)
{
  gji_dlsym_fn f = __atomic_load_n(&real_dlsym_fn, __ATOMIC_ACQUIRE);
  if (!f) {
    f = versioned(RTLD_NEXT);
    __atomic_store_n(&real_dlsym_fn, f, __ATOMIC_RELEASE);
  }
  return f;
}

static void resolve(void)
{
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  gji_next_dlsym();
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

/* RTLD_NEXT on behalf of the caller: the first definition in an object loaded after the
 * caller's (glibc would take this library as the caller). */
void *gji_next_after(const void *caller, const char *name)
{
  Dl_info info;
  struct link_map *lm = NULL;
  if (!libc_dlsym)
    return NULL;
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

bool gji_resolved(void) { return __atomic_load_n(&resolved, __ATOMIC_ACQUIRE) != 0; }

void *gji_libc_dlsym(void *handle, const char *name) { return libc_dlsym ? libc_dlsym(handle, name) : NULL; }

void *gji_first_dlsym(void *handle, const char *name)
{
  return real_dlsym_fn ? real_dlsym_fn(handle, name) : NULL;
}

void *gji_lib_slot(void *real, const char *suffix, void *slots, size_t size, int n, pthread_mutex_t *lock,
                   void (*fill)(void *slot), int *index)
{
  Dl_info info;
  gji_lib *L = NULL;
  *index = -1;
  if (!real || !dladdr(real, &info))
    return NULL;
  *index = n;
  pthread_mutex_lock(lock);
  for (int i = 0; i < n && !L; i++) {
    gji_lib *s = (gji_lib *)((char *)slots + (size_t)i * size);
    if (s->base == info.dli_fbase || !s->base) {
      L = s;
      *index = i;
      if (!L->base) {
        snprintf(L->path, sizeof(L->path), "%s", info.dli_fname ? info.dli_fname : "");
        snprintf(L->suffix, sizeof(L->suffix), "%s", suffix);
        fill(L);
        L->base = info.dli_fbase;
      }
    }
  }
  pthread_mutex_unlock(lock);
  return L;
}
