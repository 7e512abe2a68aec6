/*
 * Kernel regions in any profiled program: a module built with gpujit/regions.cuh and
 * GPUJIT_REGIONS declares `gpujit_regions`; whoever compiled and loaded it (nvcc's fatbins the
 * CUDA runtime loads, CuPy's RawModule, a torch extension, gpujit itself), this library binds it a
 * buffer in its context as gpujit's own loads do (run/kregions.c), and reads it back:
 *   - at an active step's end under a schedule ($GPUJIT_PROFILE_SCHEDULE; the first active step of
 *     a cycle empties the buffers first, so only the active steps' events are read). Without a
 *     schedule the whole run is one window: no read at step boundaries at all;
 *   - at the module's unload, and at its context's end (CUPTI's callbacks, while gpujit has them);
 *   - at the process's exit (a context already gone then is said in a note, never touched).
 * A read makes the module's context current, synchronises it (the program's work in it finishes
 * first: never per launch, only at those points), copies the buffer back and empties it; the
 * summary is written as records (kregions_records.c). The copies are the program's context's own
 * and show among its copies and memsets where CUPTI records them. A module is bound at its load
 * (a module always; a library where its image names the variable: asking the driver would load
 * it into the context) or at the first launch of one of its functions (a library that was not, a
 * load before any context). $GPUJIT_PROFILE_REGIONS sizes each buffer (events; 0: none bound).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject/image.h"
#include "inject/kregions.h"
#include "inject/kregions_records.h"
#include "inject/protocol.h"
#include "inject/resolve.h"

#define SYMBOL "gpujit_regions"
#define DEFAULT_EVENTS (1ull << 20) /* GPUJIT_REGIONS_DEFAULT_EVENTS: 32 MiB a module */
#define CAPACITY_MAX (1ull << 31)   /* a slot's cursor is 32 bits */
#define CHUNK_MAX 64u
#define WARP_SLOTS 64u
#define MAX_BOUND 64
#define SCAN_MAX ((size_t)256 << 20) /* a library image scanned for the name at most (else: at its launch) */
#define TRIED 1024                   /* handles asked at a launch, remembered (a set; cleared at unloads) */

static gji_kr_driver D;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gji_kr_buffer B[MAX_BOUND];
static int nb;
static pid_t owner;           /* the process that bound them (a forked child has no CUDA) */
static bool (*recorded_now)(void); /* whether the step going on now is recorded (steps.c) */
static uint64_t reads;        /* reads written, numbering them */
static uint64_t tried[TRIED]; /* handles asked at a launch */
static bool registered, unusable;
static uint64_t capacity = DEFAULT_EVENTS;

__attribute__((constructor)) static void kregions_init(void) { gji_fork_safe(&lock); }

void gji_kregions_window_set(bool (*fn)(void)) { recorded_now = fn; }

/* The driver's functions, from the libcuda the program loaded (never loaded here), and the
 * buffers' size: once. */
static void find_driver(void)
{
  void *cuda;
  const char *size = gji_setting(GPUJIT_RECORD_ENV_REGIONS);
  if (size && *size) {
    char *end = NULL;
    unsigned long long v = strtoull(size, &end, 10);
    if (*end || v > CAPACITY_MAX)
      gji_note("kregions", "%s=%s is not a number of events up to 2^31: the default, %llu, is used",
               GPUJIT_ENV(REGIONS), size, DEFAULT_EVENTS);
    else
      capacity = v;
  }
  if (capacity == 0 || !(cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD))) {
    unusable = true;
    return;
  }
#define S(f, n) *(void **)&D.f = gji_real_dlsym(cuda, n)
  S(module_global, "cuModuleGetGlobal_v2");
  S(library_global, "cuLibraryGetGlobal");
  S(ctx_current, "cuCtxGetCurrent");
  S(ctx_push, "cuCtxPushCurrent_v2");
  S(ctx_pop, "cuCtxPopCurrent_v2");
  S(ctx_sync, "cuCtxSynchronize");
  S(ctx_device, "cuCtxGetDevice");
  S(attribute, "cuDeviceGetAttribute");
  S(alloc, "cuMemAlloc_v2");
  S(free, "cuMemFree_v2");
  S(htod, "cuMemcpyHtoD_v2");
  S(dtoh, "cuMemcpyDtoH_v2");
  S(memset32, "cuMemsetD32_v2");
  S(pointer_attr, "cuPointerGetAttribute");
#undef S
  dlclose(cuda);
  unusable = !(D.module_global && D.ctx_current && D.ctx_push && D.ctx_pop && D.ctx_sync && D.ctx_device &&
               D.attribute && D.alloc && D.free && D.htod && D.dtoh && D.memset32 && D.pointer_attr);
}

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static bool driver(void)
{
  pthread_once(&driver_once, find_driver);
  return !unusable;
}

static gji_kr_buffer *bound_at(CUcontext ctx, CUdeviceptr state)
{
  for (int i = 0; i < nb; i++)
    if (B[i].ctx == ctx && B[i].state == state)
      return &B[i];
  return NULL;
}

/* The hardware slots of the table: SM ids may skip, so twice the SM count (as run/kregions.c). */
static unsigned slot_count(unsigned scope)
{
  CUdevice dev = 0;
  int sms = 0;
  if (D.ctx_device(&dev) != CUDA_SUCCESS || D.attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) !=
                                                CUDA_SUCCESS || sms <= 0)
    sms = 132;
  return 2u * (unsigned)sms * WARP_SLOTS * (scope == 2 ? 32u : 1u);
}

/* The buffer and the slot table allocated and written into the state: 0, or -1 (nothing kept). */
static int allocate(gji_kr_buffer *b)
{
  unsigned chunk = CHUNK_MAX;
  uint64_t words[6];
  while (chunk > 1 && chunk > capacity)
    chunk /= 2;
  b->chunk = chunk, b->capacity = capacity - capacity % chunk;
  if (D.alloc(&b->slots, ((size_t)b->nslots + 2) * 8) != CUDA_SUCCESS) /* and the two counters */
    return -1;
  if (D.alloc(&b->events, (size_t)b->capacity * 32) != CUDA_SUCCESS) {
    D.free(b->slots);
    return -1;
  }
  /* events, capacity, counters (after the slots), slots, reserved, nslots | chunk */
  words[0] = b->events, words[1] = b->capacity, words[2] = b->slots + (uint64_t)b->nslots * 8, words[3] = b->slots;
  words[4] = 0, words[5] = (uint64_t)b->nslots | (uint64_t)chunk << 32;
  if (D.memset32(b->slots, 0, ((size_t)b->nslots + 2) * 2) != CUDA_SUCCESS ||
      D.htod(b->state + GJI_KR_OFF_EVENTS, words, sizeof(words)) != CUDA_SUCCESS || D.ctx_sync() != CUDA_SUCCESS) {
    D.free(b->events), D.free(b->slots);
    return -1;
  }
  return 0;
}

static void finish_at_exit(void) { gji_kregions_finish(); }

/* Bind the state found at `state` (of `size` bytes) in context `ctx`, under the lock. */
static void bind_state(uint64_t handle, CUcontext ctx, CUdeviceptr state, size_t size, bool open)
{
  uint32_t head[4] = {0, 0, 0, 0}; /* abi, scope, and the events' address (64 bits) */
  gji_kr_buffer *b = bound_at(ctx, state);
  if (b) { /* the same state through a second handle (a library and its module in this context) */
    if (b->handles[0] != handle && !b->handles[1])
      b->handles[1] = handle;
    return;
  }
  if (size < 8 || D.dtoh(head, state, size < sizeof(head) ? 8 : sizeof(head)) != CUDA_SUCCESS)
    return;
  if (head[2] || head[3]) /* bound already: by the program (gpujit's own load), which reads it itself */
    return;
  if (head[0] != GJI_KR_LAYOUT || size < GJI_KR_STATE_BYTES) {
    gji_note("kregions-layout", "a module's gpujit_regions has layout %u; this gpujit reads layout %d: its "
             "regions are not read (build it with this gpujit's gpujit/regions.cuh)", head[0], GJI_KR_LAYOUT);
    return;
  }
  if (nb == MAX_BOUND) {
    gji_note("kregions-full", "more than %d modules with kernel regions: the later ones are not read", MAX_BOUND);
    return;
  }
  b = &B[nb];
  memset(b, 0, sizeof(*b));
  b->handles[0] = handle, b->ctx = ctx, b->state = state, b->scope = head[1];
  b->nslots = slot_count(b->scope);
  b->open = open;
  if (allocate(b) < 0) {
    gji_note("kregions-memory", "a buffer for a module's kernel regions (%llu events, 32 bytes each) could not be "
             "allocated: its regions are not read (%s sizes it)", (unsigned long long)capacity, GPUJIT_ENV(REGIONS));
    return;
  }
  nb++;
  owner = getpid();
  if (!registered) /* after the program's own exit handlers registered so far: it runs before them */
    registered = atexit(finish_at_exit) == 0;
}

/* @return false where no context was current (nothing asked) */
static bool bind(uint64_t handle, bool library)
{
  CUcontext ctx = NULL;
  CUdeviceptr state = 0;
  size_t size = 0;
  CUresult r;
  bool open;
  if (!handle || !gji_active() || !driver())
    return true;
  if (D.ctx_current(&ctx) != CUDA_SUCCESS || !ctx)
    return false;
  open = !recorded_now || recorded_now(); /* asked before the lock: steps.c calls in under its own */
  if (library)
    r = D.library_global ? D.library_global(&state, &size, (CUlibrary)(uintptr_t)handle, SYMBOL) : CUDA_ERROR_NOT_FOUND;
  else
    r = D.module_global(&state, &size, (CUmodule)(uintptr_t)handle, SYMBOL);
  if (r != CUDA_SUCCESS) /* no regions in it (the common case) */
    return true;
  pthread_mutex_lock(&lock);
  bind_state(handle, ctx, state, size, open);
  pthread_mutex_unlock(&lock);
  return true;
}

void gji_kregions_loaded(uint64_t handle, bool library, const void *image, bool launches_seen)
{
  size_t n = 0;
  const char *kind = NULL;
  const void *p;
  if (!library) {
    bind(handle, false);
    return;
  }
  /* a library: asked only where its image names the variable (a compressed fatbin does not show
   * it: its first launch binds it then) */
  if ((p = gji_image_extent(image, &n, &kind)) && n <= SCAN_MAX && memmem(p, n, SYMBOL, sizeof(SYMBOL) - 1) &&
      !bind(handle, true) && !launches_seen)
    gji_note("kregions-no-context", "a library declaring kernel regions was loaded with no CUDA context current, "
             "and its launches are not seen (no CUPTI callbacks): its regions are not read");
}

void gji_kregions_launched(uint64_t handle, bool library)
{
  size_t h = (size_t)((handle >> 4) * 0x9e3779b97f4a7c15ull % TRIED);
  if (!handle || !gji_active() || !driver())
    return;
  pthread_mutex_lock(&lock);
  for (size_t k = 0; k < 8; k++) { /* asked once per handle (until an unload clears the set) */
    size_t i = (h + k) % TRIED;
    if (tried[i] == handle) {
      pthread_mutex_unlock(&lock);
      return;
    }
    if (!tried[i]) {
      tried[i] = handle;
      break;
    }
  }
  pthread_mutex_unlock(&lock);
  (void)bind(handle, library);
}

/* Whether `b`'s context still lives (asked through our own buffer's pointer, never the context's
 * handle, which may dangle), made current and synchronised. */
static bool enter(const gji_kr_buffer *b)
{
  CUcontext c = NULL;
  if (D.pointer_attr(&c, CU_POINTER_ATTRIBUTE_CONTEXT, b->events) != CUDA_SUCCESS || c != b->ctx ||
      D.ctx_push(b->ctx) != CUDA_SUCCESS)
    return false;
  if (D.ctx_sync() != CUDA_SUCCESS) { /* the program's own fault in it: nothing read */
    D.ctx_pop(&c);
    return false;
  }
  return true;
}

static void leave(void)
{
  CUcontext c = NULL;
  D.ctx_pop(&c);
}

/* Read (where its window is open) and empty `b`, or with `release` free it: under the lock, its
 * context current. */
static void read_one(gji_kr_buffer *b, const char *at, bool release)
{
  static const uint64_t unbound[2] = {0, 0}; /* events, capacity: the device records nothing */
  if (b->open && !b->foreign && gji_kregions_read_buffer(&D, b, at, ++reads) < 0)
    gji_note("kregions-read", "a module's kernel regions could not be copied back (%s): not read", at);
  if (release || b->foreign) {
    /* a module that stays loaded (a session's end, the exit) must never write into freed memory:
     * its state is unbound first, and what was launched before that finishes */
    if (!b->foreign && (D.htod(b->state + GJI_KR_OFF_EVENTS, unbound, sizeof(unbound)) != CUDA_SUCCESS ||
                        D.ctx_sync() != CUDA_SUCCESS)) {
      gji_note("kregions-read", "a module's kernel regions could not be unbound (%s): its buffer is kept", at);
      return;
    }
    D.free(b->events), D.free(b->slots);
    b->events = b->slots = 0;
  } else if (gji_kregions_reset_buffer(&D, b) < 0 || D.ctx_sync() != CUDA_SUCCESS)
    gji_note("kregions-read", "a module's kernel regions could not be emptied (%s)", at);
}

/* Read the buffers `which` selects (a handle, a context, or all), forgetting them with `forget`. */
static void read_where(uint64_t handle, CUcontext ctx, const char *at, bool forget)
{
  unsigned gone = 0;
  pthread_mutex_lock(&lock);
  if (owner != getpid() || !nb) {
    pthread_mutex_unlock(&lock);
    return;
  }
  for (int i = 0; i < nb;) {
    gji_kr_buffer *b = &B[i];
    bool pick = handle ? b->handles[0] == handle || b->handles[1] == handle : ctx ? b->ctx == ctx : true;
    if (!pick) {
      i++;
      continue;
    }
    if (b->events && enter(b)) {
      read_one(b, at, forget);
      leave();
    } else if (b->events && b->open)
      gone++;
    if (forget || b->foreign || !b->events)
      B[i] = B[--nb]; /* (its context's end frees what it had: nothing more to do) */
    else
      i++;
  }
  if (gone)
    gji_note("kregions-gone", "the context of %u module(s) with kernel regions was gone at %s: their regions since "
             "the last read are not in the profile", gone, at);
  pthread_mutex_unlock(&lock);
}

void gji_kregions_unload(uint64_t handle)
{
  if (!handle || !nb)
    return;
  pthread_mutex_lock(&lock);
  memset(tried, 0, sizeof(tried)); /* a handle may come back for another module */
  pthread_mutex_unlock(&lock);
  read_where(handle, NULL, "unload", true);
}

void gji_kregions_context_ending(void *ctx)
{
  if (ctx && nb)
    read_where(0, (CUcontext)ctx, "context", true);
}

void gji_kregions_step(bool ended_active, bool begins_active)
{
  pid_t me;
  /* a step between two unrecorded ones: every buffer is closed already (bound closed outside an
   * active step, closed at the end of the last one), so a waited-through step costs no lock and
   * no system call */
  if (!nb || (!ended_active && !begins_active))
    return;
  if (ended_active)
    read_where(0, NULL, "step", false); /* read and emptied */
  me = getpid();
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nb && owner == me; i++) {
    gji_kr_buffer *b = &B[i];
    if (begins_active && !ended_active && b->events && enter(b)) { /* a first active step: empty */
      if (gji_kregions_reset_buffer(&D, b) < 0 || D.ctx_sync() != CUDA_SUCCESS)
        gji_note("kregions-read", "a module's kernel regions could not be emptied (step)");
      leave();
    }
    b->open = begins_active;
  }
  pthread_mutex_unlock(&lock);
}

void gji_kregions_finish(void)
{
  read_where(0, NULL, "exit", true);
  pthread_mutex_lock(&lock);
  memset(tried, 0, sizeof(tried)); /* a later session binds them again at their launches */
  pthread_mutex_unlock(&lock);
}
