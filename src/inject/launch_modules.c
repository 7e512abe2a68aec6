/*
 * Launches by correlation id (inject/launch_modules.h), in three tables:
 *   - functions: open addressing, insert-only, from a function handle to its module's index and the
 *     unload generation it was asked in. Read without a lock (a key is published after its value);
 *     written under `lock` by the thread that asked the driver, once per function and generation.
 *   - launches: slot corr % GJI_SPAN_SLOTS holds corr << 32 | module index, stored with release by
 *     the launching thread (each correlation id is one launch: no two writers of a slot at once).
 *     A kernel record reads its slot and checks the correlation id in it, so a slot reused by a
 *     later launch is never taken for its own.
 *   - names: each kernel name a function was resolved with, and its module, or "ambiguous" once two
 *     modules launched kernels of that name. Asked only when a launch's slot was reused before its
 *     record came (a thread whose buffer filled slowly while others called CUDA): a unique name is
 *     content that says the module, and the launch was seen, so its module is among those named.
 * The launch path takes no lock, makes no system call and writes one shared word (its slot).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strdup */
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inject/launch_modules.h"

#define FN_BITS 14
#define FNS (1u << FN_BITS)
#define PROBES 16

static uint64_t slots[GJI_SPAN_SLOTS];
static struct fn {
  uint64_t fn, v; /* v: generation << 32 | module index; generation 0: never asked */
} fns[FNS];
static uint64_t mods[GJI_SPAN_MODULES]; /* index 0: no module */
static uint32_t n_mods = 1;
static struct {
  uint64_t handle;
  uint32_t idx;
} by_handle[2 * GJI_SPAN_MODULES];
static struct name {
  char *s;
  uint32_t idx;
  bool ambiguous;
} *names;
static size_t names_cap, names_n;
static uint32_t generation = 1;
static uint64_t unresolved;
static gji_span_resolver resolver;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Free again in a forked child: a thread that held it at the fork does not exist there. */
static void lock_free_in_child(void) { pthread_mutex_init(&lock, NULL); }
__attribute__((constructor)) static void fork_safe_lock(void) { pthread_atfork(NULL, NULL, lock_free_in_child); }

static size_t hash64(uint64_t x, unsigned bits)
{
  x ^= x >> 29;
  return (size_t)((x * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

static size_t hash_str(const char *s)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (size_t)(h ^ (h >> 32));
}

void gji_span_set_resolver(gji_span_resolver r)
{
  __atomic_store_n(&resolver, r, __ATOMIC_RELEASE);
}

void gji_span_unload(void)
{
  if (__atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL) == 0) /* 0 means never asked */
    __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
}

uint64_t gji_span_unresolved(void)
{
  return __atomic_load_n(&unresolved, __ATOMIC_RELAXED);
}

/* The function's entry (its v), or 0. */
static uint64_t fn_find(uint64_t fn)
{
  size_t h = hash64(fn, FN_BITS);
  for (unsigned i = 0; i < PROBES; i++) {
    const struct fn *e = &fns[(h + i) & (FNS - 1)];
    uint64_t k = __atomic_load_n(&e->fn, __ATOMIC_ACQUIRE);
    if (k == fn)
      return __atomic_load_n(&e->v, __ATOMIC_ACQUIRE);
    if (!k)
      break;
  }
  return 0;
}

/* Under lock. A function whose probe sequence is full is asked again at each launch. */
static void fn_store(uint64_t fn, uint64_t v)
{
  size_t h = hash64(fn, FN_BITS);
  for (unsigned i = 0; i < PROBES; i++) {
    struct fn *e = &fns[(h + i) & (FNS - 1)];
    uint64_t k = __atomic_load_n(&e->fn, __ATOMIC_RELAXED);
    if (k == fn) {
      __atomic_store_n(&e->v, v, __ATOMIC_RELEASE);
      return;
    }
    if (!k) {
      __atomic_store_n(&e->v, v, __ATOMIC_RELAXED);
      __atomic_store_n(&e->fn, fn, __ATOMIC_RELEASE); /* the key last: a reader that sees it sees v */
      return;
    }
  }
}

/* Under lock: the module's index, added at its first launch (0 past GJI_SPAN_MODULES). */
static uint32_t module_index(uint64_t handle)
{
  size_t cap = sizeof(by_handle) / sizeof(by_handle[0]);
  size_t i = hash64(handle, 17) % cap;
  if (!handle)
    return 0;
  for (; by_handle[i].handle; i = (i + 1) % cap)
    if (by_handle[i].handle == handle)
      return by_handle[i].idx;
  if (n_mods >= GJI_SPAN_MODULES)
    return 0;
  mods[n_mods] = handle; /* published through the function table and the slots, with release */
  by_handle[i].handle = handle;
  by_handle[i].idx = n_mods;
  return n_mods++;
}

/* Under lock: the entry of `s`, or where it would go (s == NULL there). */
static struct name *name_slot(const char *s)
{
  size_t i = hash_str(s) & (names_cap - 1);
  while (names[i].s && strcmp(names[i].s, s))
    i = (i + 1) & (names_cap - 1);
  return &names[i];
}

static bool names_grow(void)
{
  struct name *old = names;
  size_t old_cap = names_cap, cap = names_cap ? names_cap * 2 : 256;
  struct name *v = calloc(cap, sizeof(*v));
  if (!v)
    return false;
  names = v, names_cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].s)
      *name_slot(old[i].s) = old[i];
  free(old);
  return true;
}

/* Under lock: a function named `s` launched from module `idx`. */
static void name_seen(const char *s, uint32_t idx)
{
  struct name *e;
  if ((names_n + 1) * 2 > names_cap && !names_grow())
    return; /* not kept: its launches are found by their slots alone */
  e = name_slot(s);
  if (e->s) {
    if (e->idx != idx)
      e->ambiguous = true;
    return;
  }
  if (!(e->s = strdup(s)))
    return;
  e->idx = idx;
  e->ambiguous = false;
  names_n++;
}

/* A function not seen in this generation: its module asked of the resolver (outside the lock: the
 * driver may call back into CUPTI), then kept. */
static uint64_t fn_resolve(uint64_t fn, uint32_t gen)
{
  uint64_t module = 0, v;
  const char *name = NULL;
  gji_span_resolver r = __atomic_load_n(&resolver, __ATOMIC_ACQUIRE);
  bool ok = fn && r && r(fn, &module, &name);
  uint32_t idx = 0;
  pthread_mutex_lock(&lock);
  if (ok)
    idx = module_index(module);
  if (!ok || (module && !idx))
    unresolved++;
  if (idx && name)
    name_seen(name, idx);
  v = (uint64_t)gen << 32 | idx;
  if (fn)
    fn_store(fn, v);
  pthread_mutex_unlock(&lock);
  return v;
}

void gji_span_launch(uint32_t corr, uint64_t fn)
{
  uint32_t gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
  uint64_t v = fn_find(fn);
  if ((uint32_t)(v >> 32) != gen)
    v = fn_resolve(fn, gen);
  __atomic_store_n(&slots[corr & (GJI_SPAN_SLOTS - 1)], (uint64_t)corr << 32 | (uint32_t)v, __ATOMIC_RELEASE);
}

bool gji_span_module(uint32_t corr, const char *name, uint64_t *module)
{
  uint64_t v = corr ? __atomic_load_n(&slots[corr & (GJI_SPAN_SLOTS - 1)], __ATOMIC_ACQUIRE) : 0;
  bool ok = false;
  *module = 0;
  if (v && (uint32_t)(v >> 32) == corr) {
    *module = mods[(uint32_t)v];
    return true;
  }
  if (!name)
    return false;
  pthread_mutex_lock(&lock);
  if (names_cap) {
    const struct name *e = name_slot(name);
    if (e->s && !e->ambiguous) {
      *module = mods[e->idx];
      ok = true;
    }
  }
  pthread_mutex_unlock(&lock);
  return ok;
}
