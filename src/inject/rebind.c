/*
 * In-process sessions (inproc.c) see the compiles, loads and CUPTI take-overs of a program that
 * did not start with this library preloaded by rebinding what its loaded objects call:
 *   - by relocation: each object's GOT slots (JUMP_SLOT, GLOB_DAT) of the functions this library
 *     wraps (NVRTC, nvJitLink, libNVVM, the driver's loads, cuGetProcAddress, CUPTI's take-over
 *     calls) get their wrapper, and its slots of dlsym get this file's dlsym — a look-up made later
 *     (CuPy's through ctypes, PyTorch's lazy NVRTC, a ctypes-loaded NVRTC) gets the wrapper too;
 *   - by value: the words of each object's writable data that hold one of those functions' real
 *     addresses — function pointers a program resolved with dlsym before the session began, kept
 *     in its own tables (CuPy's, PyTorch's lazy NVRTC, gpujit's own) — get its wrapper. Only the
 *     pages the process wrote are read (rebind_scan.c says why that loses none).
 * Objects loaded after the session began are rebound at the next dlsym a rebound object makes
 * (Python's import of an extension module asks dlsym for its PyInit). Every slot and word is put
 * back when the session ends if it still holds the wrapper; a wrapper handed out stays valid (this
 * library is never unloaded) and only forwards once nothing is recorded. Pointers the program keeps
 * outside any loaded object's data (the heap: a ctypes function object made before the session)
 * are out of reach here: the caller says so (gji_rebind_counts).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "inject/rebind.h"
#include "inject/rebind_scan.h"
#include "inject/resolve.h"

/* Objects never rebound: the dynamic linker, libc, this library, and the libraries whose functions
 * are watched (their own calls among themselves are not the program's). */
static const char *const skipped[] = {"ld-linux",  "libc.so",    "libdl.so",     "libpthread.so", "linux-vdso",
                                      "libnvrtc",  "libnvJitLink", "libnvvm",    "libcuda.so",    "libcupti",
                                      "libnvptxcompiler", "libnvidia-"};

typedef struct patch {
  void **where;
  void *was, *now;
  uintptr_t base; /* the object it is in */
} patch;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static patch *patches;
static size_t npatches, cappatches;
static uintptr_t *done; /* objects rebound in this session, by base address */
static size_t ndone, capdone;
static unsigned long long adds_seen; /* dl_iterate_phdr's count of objects loaded, when last looked */
static volatile int on;
static size_t by_value; /* words rebound by value */
static size_t by_slot;  /* GOT slots rebound */

/* The real functions looked for by value, and their wrappers (rebind_scan.c looks). */
static uintptr_t reals[GJI_SCAN_MAX];
static void *wrappers[GJI_SCAN_MAX];
static size_t ntable;
static gji_scan_mode scan_mode;
static gji_scan_stats scanned; /* what the passes of this session looked at */

static void *w_dlsym(void *handle, const char *name);

static bool skip(const char *path)
{
  const char *base = path ? strrchr(path, '/') : NULL;
  base = base ? base + 1 : path ? path : "";
  if (!*base)
    return false;
  for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++)
    if (!strncmp(base, skipped[i], strlen(skipped[i])))
      return true;
  return false;
}

/* Write `value` at `where`, opening a read-only page for the write. -1: it could not be. */
static int put(void **where, void *value)
{
  const gji_region *r = gji_maps_find((uintptr_t)where);
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t at = (uintptr_t)where & ~(uintptr_t)(page - 1);
  if (!r)
    return -1;
  if (!r->writable && mprotect((void *)at, (size_t)page, PROT_READ | PROT_WRITE) != 0)
    return -1;
  __atomic_store_n(where, value, __ATOMIC_RELEASE);
  if (!r->writable)
    mprotect((void *)at, (size_t)page, PROT_READ);
  return 0;
}

static void remember(void **where, void *was, void *now, uintptr_t base)
{
  if (npatches == cappatches) {
    patch *p = realloc(patches, (cappatches ? cappatches * 2 : 64) * sizeof(*p));
    if (!p)
      return; /* not put back at the end: the wrapper it holds forwards */
    patches = p, cappatches = cappatches ? cappatches * 2 : 64;
  }
  patches[npatches++] = (patch){where, was, now, base};
}

static void rebind_word(void **where, void *wrapper, uintptr_t base)
{
  void *was = __atomic_load_n(where, __ATOMIC_ACQUIRE);
  if (was == wrapper || put(where, wrapper) != 0)
    return;
  remember(where, was, wrapper, base);
}

/* ---- by relocation ---- */

static uintptr_t dyn_ptr(uintptr_t base, uintptr_t p) { return p < base ? base + p : p; }

/* The function `name` as object `lm` resolves it (its own scope: a library loaded RTLD_LOCAL finds
 * its own dependencies), for a slot not bound yet. */
static void *resolve_for(struct link_map *lm, const char *name)
{
  void *h = dlopen(lm->l_name && lm->l_name[0] ? lm->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD), *f;
  if (!h)
    return NULL;
  f = gji_real_dlsym(h, name);
  dlclose(h);
  return f;
}

static void rebind_slots(struct link_map *lm)
{
#if defined(__x86_64__) || defined(__aarch64__)
#if defined(__x86_64__)
  enum { JUMP_SLOT = R_X86_64_JUMP_SLOT, GLOB_DAT = R_X86_64_GLOB_DAT };
#else
  enum { JUMP_SLOT = R_AARCH64_JUMP_SLOT, GLOB_DAT = R_AARCH64_GLOB_DAT };
#endif
  uintptr_t base = (uintptr_t)lm->l_addr;
  const ElfW(Sym) *symtab = NULL;
  const char *strtab = NULL;
  const ElfW(Rela) *rel[2] = {NULL, NULL};
  size_t relsz[2] = {0, 0};
  if (!lm->l_ld)
    return;
  for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++)
    switch (d->d_tag) {
    case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(base, d->d_un.d_ptr); break;
    case DT_STRTAB: strtab = (const char *)dyn_ptr(base, d->d_un.d_ptr); break;
    case DT_JMPREL: rel[0] = (const ElfW(Rela) *)dyn_ptr(base, d->d_un.d_ptr); break;
    case DT_PLTRELSZ: relsz[0] = d->d_un.d_val; break;
    case DT_RELA: rel[1] = (const ElfW(Rela) *)dyn_ptr(base, d->d_un.d_ptr); break;
    case DT_RELASZ: relsz[1] = d->d_un.d_val; break;
    case DT_PLTREL:
      if (d->d_un.d_val != DT_RELA)
        return;
      break;
    default: break;
    }
  if (!symtab || !strtab)
    return;
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; rel[t] && i < relsz[t] / sizeof(ElfW(Rela)); i++) {
      const ElfW(Rela) *r = &rel[t][i];
      unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
      size_t sym = (size_t)ELF64_R_SYM(r->r_info);
      const char *name;
      void **slot, *now, *real, *w;
      Dl_info in;
      if ((type != JUMP_SLOT && type != GLOB_DAT) || sym == 0)
        continue;
      name = strtab + symtab[sym].st_name;
      slot = (void **)(base + r->r_offset);
      if (!strcmp(name, "dlsym")) {
        rebind_word(slot, (void *)w_dlsym, base), by_slot++;
        continue;
      }
      if (!gji_watched(name))
        continue;
      now = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
      /* a slot not bound yet (lazy binding) holds a stub inside the object: ask its scope */
      real = dladdr(now, &in) && (uintptr_t)in.dli_fbase == base ? resolve_for(lm, name) : now;
      if (real && (w = gji_wrap_symbol(name, real)) != NULL) {
        rebind_word(slot, w, base);
        by_slot++;
      }
    }
#else
  (void)lm;
#endif
}

/* ---- by value ---- */

static void rebind_value(void **where, void *wrapper, void *payload)
{
  rebind_word(where, wrapper, *(uintptr_t *)payload);
  by_value++;
}

static bool is_done(uintptr_t base)
{
  for (size_t i = 0; i < ndone; i++)
    if (done[i] == base)
      return true;
  return false;
}

static int rebind_one(struct dl_phdr_info *info, size_t size, void *payload)
{
  struct link_map *lm = NULL;
  uintptr_t base = (uintptr_t)info->dlpi_addr;
  (void)size, (void)payload;
  if (is_done(base) || skip(info->dlpi_name))
    return 0;
  if (ndone == capdone) {
    uintptr_t *d = realloc(done, (capdone ? capdone * 2 : 128) * sizeof(*d));
    if (!d)
      return 1;
    done = d, capdone = capdone ? capdone * 2 : 128;
  }
  done[ndone++] = base;
  /* this library itself: its tables hold the real functions, as they must */
  if (info->dlpi_phnum && gji_is_self((const void *)(base + info->dlpi_phdr[0].p_vaddr)))
    return 0;
  for (lm = _r_debug.r_map; lm && (uintptr_t)lm->l_addr != base; lm = lm->l_next)
    ;
  if (lm && lm->l_ld && (uintptr_t)lm->l_ld >= base)
    rebind_slots(lm);
  gji_scan_object(info, rebind_value, &base);
  return 0;
}

static int count_adds(struct dl_phdr_info *info, size_t size, void *payload)
{
  if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
    *(unsigned long long *)payload = info->dlpi_adds;
  return 1;
}

/* Every loaded object not rebound yet, under the lock. */
static void rebind_new(void)
{
  unsigned long long adds = 0;
  dl_iterate_phdr(count_adds, &adds);
  if (adds && adds == adds_seen)
    return;
  adds_seen = adds;
  gji_maps_read();
  gji_scan_begin(scan_mode, &scanned);
  dl_iterate_phdr(rebind_one, NULL);
  gji_scan_end();
}

/* ---- the functions looked for by value ---- */

static const char *const by_value_names[] = {
    "nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcDestroyProgram", "nvvmCompileProgram",
    "cuModuleLoad", "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary", "cuLibraryLoadData",
    "cuLibraryLoadFromFile", "cuLinkComplete", "cuGetProcAddress", "cuGetProcAddress_v2", "cuptiSubscribe",
    "cuptiSubscribe_v2", "cuptiActivityRegisterCallbacks", "cuptiActivityEnable", "cuptiActivityEnableContext",
    "cuptiActivityEnableAndDump"};

static const char *const providers[] = {"libnvrtc.so", "libnvvm.so", "libcuda.so", "libcupti.so", "libnvJitLink.so"};
/* nvJitLink's entry points carry the version of the header a caller was built with
 * ("__nvJitLinkCreate_12_4"): those of each version that library may export are looked for */
static const char *const jitlink_names[] = {"nvJitLinkCreate", "nvJitLinkAddData", "nvJitLinkAddFile",
                                            "nvJitLinkComplete", "nvJitLinkDestroy"};

static void add_one(void *h, uintptr_t base, const char *name, size_t *found)
{
  void *real = gji_real_dlsym(h, name), *w;
  Dl_info in;
  /* its own definition only (a look-up in a handle also searches the library's dependencies) */
  if (ntable >= GJI_SCAN_MAX || !real || !dladdr(real, &in) ||
      (uintptr_t)in.dli_fbase != base || !(w = gji_wrap_symbol(name, real)))
    return;
  reals[ntable] = (uintptr_t)real, wrappers[ntable++] = w;
  *found += 1;
}

static int add_known(struct dl_phdr_info *info, size_t size, void *payload)
{
  const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  bool provider = false;
  void *h;
  (void)size;
  base = base ? base + 1 : "";
  for (size_t i = 0; i < sizeof(providers) / sizeof(providers[0]); i++)
    provider |= !strncmp(base, providers[i], strlen(providers[i]));
  if (!provider || !(h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD)))
    return 0;
  for (size_t i = 0; i < sizeof(by_value_names) / sizeof(by_value_names[0]); i++)
    add_one(h, (uintptr_t)info->dlpi_addr, by_value_names[i], payload);
  for (size_t i = 0; !strncmp(base, "libnvJitLink", 12) && i < sizeof(jitlink_names) / sizeof(jitlink_names[0]); i++)
    for (int major = 11; major <= 15; major++)
      for (int minor = 0; minor <= 9; minor++) {
        char name[64];
        snprintf(name, sizeof(name), "__%s_%d_%d", jitlink_names[i], major, minor);
        add_one(h, (uintptr_t)info->dlpi_addr, name, payload);
      }
  dlclose(h);
  return 0;
}

/* Wall and this thread's CPU time, for the measuring note (the CPU time holds on a loaded machine). */
typedef struct clocks {
  struct timespec wall, cpu;
} clocks;

static clocks clocks_now(void)
{
  clocks c;
  clock_gettime(CLOCK_MONOTONIC, &c.wall);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c.cpu);
  return c;
}

static double ms_between(const struct timespec *a, const struct timespec *b)
{
  return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* $GPUJIT_BENCH_REBIND, the measuring switch: "full" reads every page as the former scan did;
 * any value has what rebinding did and cost said in a note. */
static const char *measuring(void)
{
  const char *m = getenv("GPUJIT_BENCH_REBIND");
  return m && *m ? m : NULL;
}

size_t gji_rebind_start(void)
{
  size_t found = 0;
  const char *m = measuring();
  clocks t0 = clocks_now(), t1;
  gji_scan_stats s;
  size_t values, slots;
  pthread_mutex_lock(&lock);
  ntable = 0, ndone = 0, npatches = 0, adds_seen = 0, by_value = 0, by_slot = 0;
  scan_mode = m && !strcmp(m, "full") ? GJI_SCAN_FULL : GJI_SCAN_WRITTEN;
  memset(&scanned, 0, sizeof(scanned));
  dl_iterate_phdr(add_known, &found);
  gji_scan_set(reals, wrappers, ntable);
  __atomic_store_n(&on, 1, __ATOMIC_RELEASE);
  rebind_new();
  s = scanned, values = by_value, slots = by_slot;
  pthread_mutex_unlock(&lock);
  t1 = clocks_now();
  if (m)
    gji_note("rebind-measure",
             "%s=%s: rebinding took %.2f ms (%.2f ms of CPU): %zu objects, %.1f MiB of writable segments, %.1f MiB "
             "of them read (%s); %zu words by value, %zu slots", "GPUJIT_BENCH_REBIND", m,
             ms_between(&t0.wall, &t1.wall), ms_between(&t0.cpu, &t1.cpu), s.objects,
             (double)s.writable / 1048576.0, (double)s.scanned / 1048576.0,
             scan_mode == GJI_SCAN_FULL ? "every page" : s.pagemap ? "the pages written" : "every page: no pagemap",
             values, slots);
  return found;
}

void gji_rebind_counts(size_t *values, size_t *slots)
{
  pthread_mutex_lock(&lock);
  *values = by_value, *slots = by_slot;
  pthread_mutex_unlock(&lock);
}

static int still_loaded(struct dl_phdr_info *info, size_t size, void *payload)
{
  (void)size;
  return (uintptr_t)info->dlpi_addr == *(uintptr_t *)payload;
}

/* The objects loaded now, by base address: a list to search (NULL: none could be made). */
typedef struct bases {
  uintptr_t *at;
  size_t n, cap;
} bases;

static int add_base(struct dl_phdr_info *info, size_t size, void *payload)
{
  bases *b = payload;
  (void)size;
  if (b->n == b->cap) {
    uintptr_t *m = realloc(b->at, (b->cap ? b->cap * 2 : 256) * sizeof(*m));
    if (!m) {
      free(b->at), b->at = NULL;
      return 1;
    }
    b->at = m, b->cap = b->cap ? b->cap * 2 : 256;
  }
  b->at[b->n++] = (uintptr_t)info->dlpi_addr;
  return 0;
}

static int by_address(const void *x, const void *y)
{
  uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
  return a < b ? -1 : a > b;
}

static bool loaded(const bases *b, uintptr_t base)
{
  if (!b->at) /* no list: ask the loader */
    return dl_iterate_phdr(still_loaded, &base) != 0;
  return bsearch(&base, b->at, b->n, sizeof(base), by_address) != NULL;
}

void gji_rebind_stop(void)
{
  clocks t0 = clocks_now(), t1;
  size_t back = 0;
  bases b = {NULL, 0, 0};
  pthread_mutex_lock(&lock);
  __atomic_store_n(&on, 0, __ATOMIC_RELEASE);
  if (npatches) {
    gji_maps_read();
    dl_iterate_phdr(add_base, &b);
  }
  if (b.at)
    qsort(b.at, b.n, sizeof(b.at[0]), by_address);
  for (size_t i = npatches; i-- > 0;) {
    patch *p = &patches[i];
    /* an object unloaded since has nothing to put back (its pages are gone) */
    if (!loaded(&b, p->base) || !gji_maps_find((uintptr_t)p->where))
      continue;
    if (__atomic_load_n(p->where, __ATOMIC_ACQUIRE) == p->now && put(p->where, p->was) == 0)
      back++;
  }
  free(b.at);
  npatches = 0;
  pthread_mutex_unlock(&lock);
  t1 = clocks_now();
  if (measuring())
    gji_note("rebind-measure-end", "%s: putting back took %.2f ms (%.2f ms of CPU): %zu words and slots",
             "GPUJIT_BENCH_REBIND", ms_between(&t0.wall, &t1.wall), ms_between(&t0.cpu, &t1.cpu), back);
}

/* ---- dlsym, for the objects rebound: the look-up the caller asked for, the wrapper of a watched
 * function, and objects loaded since the last look rebound ---- */

/* RTLD_DEFAULT on behalf of `caller`: the global scope, then the caller's own (an object loaded
 * RTLD_LOCAL, as Python loads extension modules, finds its dependencies), as glibc searches. */
static void *default_for(const void *caller, const char *name)
{
  Dl_info info;
  struct link_map *lm = NULL;
  void *f = gji_libc_dlsym(RTLD_DEFAULT, name), *h;
  if (f && !gji_is_self(f))
    return f;
  f = NULL;
  if (dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm &&
      (h = dlopen(lm->l_name && lm->l_name[0] ? lm->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD))) {
    f = gji_libc_dlsym(h, name);
    dlclose(h);
  }
  return f && !gji_is_self(f) ? f : NULL;
}

static void *w_dlsym(void *handle, const char *name)
{
  const void *caller = __builtin_return_address(0);
  void *r, *w;
  if (handle == RTLD_NEXT)
    r = gji_next_after(caller, name);
  else if (handle == RTLD_DEFAULT)
    r = default_for(caller, name);
  else
    r = gji_libc_dlsym(handle, name);
  if (__atomic_load_n(&on, __ATOMIC_ACQUIRE) && pthread_mutex_trylock(&lock) == 0) {
    /* the caller may be about to run an object loaded since (an extension module's PyInit) */
    if (on)
      rebind_new();
    pthread_mutex_unlock(&lock);
  }
  if (!r || !name)
    return r;
  w = gji_wrap_symbol(name, r);
  return w ? w : r;
}
