/*
 * The GPU side of a profile, through CUPTI, started by the driver's injection hook
 * (CUDA_INJECTION64_PATH names this library; the driver calls InitializeInjection at cuInit):
 *   - module loads (cuModuleLoad*, cuLibraryLoad*, cuLinkComplete) from driver callbacks: the
 *     image's kind, size and hash, wall time, handle, correlation id;
 *   - launches: the module each launch's function belongs to, by correlation id (launch_modules.c): the
 *     launch callback is the one piece of gpujit on every launch's path, so it takes no lock and
 *     makes no system call — the driver is asked once per distinct function;
 *   - activity: kernels (the concurrent kind, which leaves the program's concurrency alone),
 *     copies, memsets, the driver's JIT (PTX to cubin, its cache) and NVTX ranges.
 * Activity comes in buffers (buffers.c), read as each completes (activity.c): per-kernel sums go
 * to the record file (so a process that ends in _exit or a crash keeps what was delivered), and
 * per-launch lines while the trace budget lasts ($GPUJIT_PROFILE_MAX_EVENTS, default 200000 per
 * process); past it the launches are still summed, and the count of those left out is written.
 * CUPTI taken by someone else (Nsight Systems or Compute attached, the program subscribed first):
 * a note says so once; compiles are still recorded, and module loads by driver.c's wrappers. The
 * program taking CUPTI later (PyTorch's profiler) finds gpujit stepping aside (gji_cupti_yield):
 * its profiler works as it would without gpujit.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inject/protocol.h"
#include "inject/activity.h"
#include "inject/buffers.h"
#include "inject/cupti.h"
#include "inject/cupti_loads.h"
#include "inject/kregions.h"
#include "inject/cupti_settings.h"
#include "inject/resolve.h"
#include "inject/record.h"
#include "inject/launch_modules.h"
#include "inject/nvtx_inject.h"
#include "inject/step_markers.h"

static struct {
  void *lib;
  CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
  CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
  CUptiResult (*activity_enable)(CUpti_ActivityKind);
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
  CUptiResult (*flush_all)(uint32_t);
  CUptiResult (*flush_period)(uint32_t);
  CUptiResult (*timestamp)(uint64_t *);
  CUptiResult (*result_string)(CUptiResult, const char **);
  CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
  CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
  CUptiResult (*activity_disable)(CUpti_ActivityKind);
  CUptiResult (*set_attribute)(CUpti_ActivityAttribute, size_t *, void *);
  CUptiResult (*hw_trace)(uint8_t);
  CUptiResult (*finalize)(void);
  CUresult (*func_get_module)(CUmodule *, CUfunction);
  CUresult (*func_get_name)(const char **, CUfunction);
  CUresult (*kernel_get_library)(CUlibrary *, CUkernel);
  CUresult (*kernel_get_name)(const char **, CUkernel);
  CUpti_SubscriberHandle sub;
} C;
static pthread_mutex_t yield_lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((constructor)) static void fork_safe_locks(void)
{
  gji_fork_safe(&yield_lock);
}

static gji_cupti_steps steps; /* all NULL: no steps (the whole run, CUPTI from cuInit) */
static const char *marker;    /* a step's NVTX name or kernel name fragment */
static int marker_src;        /* 2: NVTX, 3: kernel */

void gji_cupti_steps_set(const gji_cupti_steps *s) { steps = *s; }

/* A function's module and name, asked of the driver once per distinct function and unload
 * generation (launch_modules.c keeps the answer): a CUfunction's module, else a CUkernel's library. */
static bool resolve(uint64_t fn, uint64_t *module, const char **name)
{
  CUfunction f = (CUfunction)(uintptr_t)fn;
  CUmodule m = NULL;
  CUlibrary lib = NULL;
  if (C.func_get_module && C.func_get_module(&m, f) == CUDA_SUCCESS) {
    *module = (uint64_t)(uintptr_t)m;
    if (!C.func_get_name || C.func_get_name(name, f) != CUDA_SUCCESS)
      *name = NULL;
    gji_kregions_launched(*module, false); /* once per distinct function: its module's regions bound */
    return true;
  }
  if (C.kernel_get_library && C.kernel_get_library(&lib, (CUkernel)f) == CUDA_SUCCESS) {
    *module = (uint64_t)(uintptr_t)lib;
    if (!C.kernel_get_name || C.kernel_get_name(name, (CUkernel)f) != CUDA_SUCCESS)
      *name = NULL;
    gji_kregions_launched(*module, true);
    return true;
  }
  return false;
}

/* A launch: its function kept by correlation id until its kernel record. This runs on every
 * launch, in the program's thread: one look-up and one store (launch_modules.c), nothing else. */
static void on_launch(CUpti_CallbackId id, const CUpti_CallbackData *cb)
{
  CUfunction f;
  if (cb->callbackSite != CUPTI_API_ENTER)
    return;
  if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz)
    f = ((const cuLaunchKernelEx_params *)cb->functionParams)->f;
  else /* cuLaunchKernel, cuLaunchCooperativeKernel (and _ptsz), cuLaunch, cuLaunchGrid(Async): the function first */
    f = *(const CUfunction *)cb->functionParams;
  gji_span_launch(cb->correlationId, (uint64_t)(uintptr_t)f);
  if (marker_src == 3 && marker && C.func_get_name) { /* a kernel's launch begins a step */
    const char *name = NULL;
    if (C.func_get_name(&name, f) == CUDA_SUCCESS && name && strstr(name, marker))
      steps.boundary(3);
  }
}

static void CUPTIAPI callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *data)
{
  (void)ud;
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    const char *m = marker_src == 2 && marker ? gji_nvtx_message(id, ((const CUpti_NvtxData *)data)->functionParams) : NULL;
    if (m && !strcmp(m, marker))
      steps.boundary(2);
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    /* a module goes, also one a context's end unloads with no call of the program's: a
     * function's handle may come back for another module */
    if (id == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING || id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
      gji_span_unload();
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) /* its modules' regions read while it lives */
      gji_kregions_context_ending(((const CUpti_ResourceData *)data)->context);
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  switch (id) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
    on_launch(id, data);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleUnload:
  case CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload:
    if (((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_ENTER) {
      gji_span_unload();
      gji_cupti_unload(id, data); /* its kernel regions read before it goes */
    }
    break;
  default:
    gji_cupti_load(id, data);
  }
}

static pid_t started_pid;
/* kinds[0]: the concurrent kind, which leaves the program's kernels as concurrent as they were
 * (the serial kind only when measuring, below) */
static CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_JIT,
                                     CUPTI_ACTIVITY_KIND_MARKER};

/* CUPTI's attributes that must be set before contexts are made (here, at cuInit). */
static void set_attributes(void)
{
  uint8_t yes = 1;
  size_t len = sizeof(yes);
  if (!C.set_attribute)
    return;
  /* the buffers this library hands CUPTI are zeroed (buffers.c): CUPTI need not */
  C.set_attribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &yes);
  if (gji_cupti_cfg.devbuf_kib > 0) {
    size_t bytes = (size_t)gji_cupti_cfg.devbuf_kib << 10;
    len = sizeof(bytes);
    C.set_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &len, &bytes);
  }
  if (gji_cupti_cfg.pinned >= 0) {
    uint8_t pinned = (uint8_t)gji_cupti_cfg.pinned;
    len = sizeof(pinned);
    C.set_attribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &len, &pinned);
  }
}
/* Whether this library's CUPTI subscriber records module loads (else driver.c's wrappers do). */
static volatile int subscribed;
/* Whether CUPTI's activity records are on in this process (flushed at the end and on request). */
static volatile int recording;

bool gji_cupti_records_loads(void)
{
  return __atomic_load_n(&subscribed, __ATOMIC_ACQUIRE) != 0;
}

void gji_cupti_yield(const char *api)
{
  pthread_mutex_lock(&yield_lock);
  if ((subscribed || recording) && started_pid == getpid()) {
    /* what was recorded goes out first; then CUPTI is left as the program would find it */
    if (C.flush_all)
      C.flush_all(1);
    if (C.activity_disable)
      for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        C.activity_disable(kinds[i]);
    if (C.unsubscribe && C.sub)
      C.unsubscribe(C.sub);
    C.sub = NULL;
    __atomic_store_n(&subscribed, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&recording, 0, __ATOMIC_RELEASE);
    gji_note("cupti-yield",
             "the program took CUPTI (%s): gpujit stepped aside; kernels, copies and driver JIT "
             "after that are not recorded; compiles and module loads are",
             api);
  }
  pthread_mutex_unlock(&yield_lock);
}

/* gpujit_profile_load_range, in this process, asks for what CUPTI holds before reading records. */
__attribute__((visibility("default"))) void GPUJIT_RECORD_FLUSH_FN(void);
void GPUJIT_RECORD_FLUSH_FN(void)
{
  gji_later_flush(); /* the steps' records kept for later */
  if (started_pid == getpid() && C.flush_all && __atomic_load_n(&recording, __ATOMIC_ACQUIRE))
    C.flush_all(1);
}

static void note_unresolved(void)
{
  uint64_t n = gji_span_unresolved();
  if (n > 0)
    gji_note("launch-modules", "the module of %llu launched functions could not be asked of the driver: their "
             "launches are counted without a module", (unsigned long long)n);
}

static void at_exit(void)
{
  if (started_pid != getpid()) /* a forked child: CUDA is not usable there */
    return;
  gji_kregions_finish(); /* first: the copies it makes are flushed with the rest */
  pthread_mutex_lock(&yield_lock); /* a detach under way ends first */
  started_pid = 0; /* once */
  if (C.flush_all && __atomic_load_n(&recording, __ATOMIC_ACQUIRE))
    C.flush_all(1);
  pthread_mutex_unlock(&yield_lock);
  gji_activity_end_record();
  note_unresolved();
}

static const char *cupti_error(CUptiResult r)
{
  const char *s = NULL;
  if (C.result_string)
    C.result_string(r, &s);
  return s ? s : "unknown CUPTI error";
}

static bool load_cupti(void)
{
  const char *path = gji_setting(GPUJIT_RECORD_ENV_CUPTI_LIBRARY);
  void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  C.lib = dlopen(path && *path ? path : "libcupti.so", RTLD_NOW | RTLD_LOCAL);
  if (!C.lib) {
    gji_note("cupti",
             "CUPTI could not be loaded (%s): kernels, copies and driver JIT are not recorded; "
             "compiles and module loads are",
             dlerror());
    return false;
  }
#define S(f, n) *(void **)&C.f = gji_real_dlsym(C.lib, n)
  S(subscribe, "cuptiSubscribe");
  S(enable_callback, "cuptiEnableCallback");
  S(activity_enable, "cuptiActivityEnable");
  S(register_callbacks, "cuptiActivityRegisterCallbacks");
  S(next_record, "cuptiActivityGetNextRecord");
  S(flush_all, "cuptiActivityFlushAll");
  S(flush_period, "cuptiActivityFlushPeriod");
  S(timestamp, "cuptiGetTimestamp");
  S(result_string, "cuptiGetResultString");
  S(dropped, "cuptiActivityGetNumDroppedRecords");
  S(unsubscribe, "cuptiUnsubscribe");
  S(activity_disable, "cuptiActivityDisable");
  S(set_attribute, "cuptiActivitySetAttribute");
  S(hw_trace, "cuptiActivityEnableHWTrace");
  S(finalize, "cuptiFinalize");
#undef S
  if (cuda) {
    *(void **)&C.func_get_module = gji_real_dlsym(cuda, "cuFuncGetModule");
    *(void **)&C.func_get_name = gji_real_dlsym(cuda, "cuFuncGetName");
    *(void **)&C.kernel_get_library = gji_real_dlsym(cuda, "cuKernelGetLibrary");
    *(void **)&C.kernel_get_name = gji_real_dlsym(cuda, "cuKernelGetName");
    dlclose(cuda);
  }
  return C.subscribe && C.enable_callback && C.activity_enable && C.register_callbacks && C.next_record;
}

static const CUpti_CallbackId loads[] = {CUPTI_DRIVER_TRACE_CBID_cuModuleLoad,
                                         CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData,
                                         CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx,
                                         CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary,
                                         CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData,
                                         CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadFromFile,
                                         CUPTI_DRIVER_TRACE_CBID_cuLinkComplete,
                                         CUPTI_DRIVER_TRACE_CBID_cuModuleUnload,
                                         CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload};
static const CUpti_CallbackId launches[] = {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunch,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync};

static bool loaded;      /* CUPTI loaded and its settings read */
static bool cuda_up;     /* the driver called InitializeInjection: CUPTI may be set up */
static bool detached;    /* cuptiFinalize'd after a schedule's last active step */
static bool want_steps;  /* a schedule: the driver API's launch records, for the steps' launches */

/* The callbacks: with `full`, module loads and unloads, and launches (tied to modules); always the
 * calls a step marker needs (an NVTX range's push, a kernel's launch). Without `full` and without
 * a marker, none: CUPTI stays unset up. */
static void subscribe_callbacks(bool full)
{
  bool launches_on = (full && gji_cupti_cfg.launch_callbacks) || marker_src == 3;
  for (size_t i = 0; full && i < sizeof(loads) / sizeof(loads[0]); i++)
    C.enable_callback(1, C.sub, CUPTI_CB_DOMAIN_DRIVER_API, loads[i]);
  if (full) {
    C.enable_callback(1, C.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
    C.enable_callback(1, C.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  }
  for (size_t i = 0; launches_on && i < sizeof(launches) / sizeof(launches[0]); i++)
    C.enable_callback(1, C.sub, CUPTI_CB_DOMAIN_DRIVER_API, launches[i]);
  for (unsigned i = 0; marker_src == 2 && i < gji_nvtx_begin_count; i++)
    C.enable_callback(1, C.sub, CUPTI_CB_DOMAIN_NVTX, gji_nvtx_begin_ids[i]);
  if (full)
    __atomic_store_n(&subscribed, 1, __ATOMIC_RELEASE); /* loads come through the callbacks now */
}

static void write_clock(void)
{
  uint64_t ts = 0;
  gji_line l;
  /* the two clocks side by side: activity times are CUPTI's */
  if (C.timestamp && C.timestamp(&ts) == CUPTI_SUCCESS) {
    uint64_t host = gji_now();
    gji_activity_clock(ts, host);
    gji_begin(&l, GPUJIT_KIND(CLOCK));
    gji_u64(&l, "cupti", ts);
    gji_u64(&l, "host", host);
    gji_end(&l);
  }
}

static void enable_activity(void)
{
  CUptiResult r;
  if (gji_cupti_cfg.serial)
    kinds[0] = CUPTI_ACTIVITY_KIND_KERNEL;
  for (size_t i = 0; i < (gji_cupti_cfg.kernel_only ? 1 : sizeof(kinds) / sizeof(kinds[0])); i++)
    if (kinds[i] == CUPTI_ACTIVITY_KIND_MARKER && gji_nvtx_injected())
      continue; /* NVTX calls come to this library, which writes the ranges itself (nvtx_inject.c) */
    else if ((r = C.activity_enable(kinds[i])) != CUPTI_SUCCESS)
      gji_note(kinds[i] == CUPTI_ACTIVITY_KIND_MARKER ? "nvtx" : "activity",
               "CUPTI activity kind %d cannot be enabled: %s", (int)kinds[i], cupti_error(r));
  if (want_steps && (r = C.activity_enable(CUPTI_ACTIVITY_KIND_DRIVER)) != CUPTI_SUCCESS)
    gji_note("activity", "CUPTI's driver API records cannot be enabled (%s): steps show no launches",
             cupti_error(r));
  if (gji_cupti_cfg.hwtrace && C.hw_trace && (r = C.hw_trace(1)) != CUPTI_SUCCESS)
    gji_note("hwtrace", "CUPTI's hardware trace cannot be enabled: %s", cupti_error(r));
}

/* CUPTI on: the subscriber and its callbacks; with `activity`, activity buffers and kinds too.
 * false: it could not be. */
static bool attach(bool activity)
{
  CUptiResult r;
  if (!activity && !marker)
    return true; /* nothing to count before the first recorded step: CUPTI is not touched */
  if (!gji_cupti_cfg.no_subscriber && !C.sub && (r = C.subscribe(&C.sub, callback, NULL)) != CUPTI_SUCCESS) {
    C.sub = NULL;
    gji_note("cupti",
             "CUPTI is in use by another tool or by the program (%s): kernels, copies and driver JIT "
             "are not recorded; compiles and module loads are",
             cupti_error(r));
    return false;
  }
  /* a marker's subscriber takes every callback from the start, as the whole-run profile does: set
   * up later from inside its NVTX callback, it broke PyTorch's heap (seen on the H200) */
  if (!gji_cupti_cfg.no_subscriber && !subscribed)
    subscribe_callbacks(true);
  if (!activity)
    return true;
  set_attributes();
  if ((r = C.register_callbacks(gji_buffer_request, gji_activity_completed)) != CUPTI_SUCCESS) {
    gji_note("cupti",
             "CUPTI activity records are unavailable (%s): kernels, copies and driver JIT are not "
             "recorded",
             cupti_error(r));
    return false;
  }
  enable_activity();
  /* Full buffers go out every 100 ms: a killed process keeps what was delivered, and few buffers
   * are in flight at once, so the ones buffers.c keeps ready serve CUPTI's requests in the
   * launching thread (a 4 MiB buffer holds about 19,000 kernel records: at 300,000 launches a
   * second, 1.5 buffers fill in 100 ms; with 500 ms, 7.7 did, more than were kept ready, and each
   * one more was allocated and faulted in by the launching thread). */
  if (C.flush_period)
    C.flush_period((uint32_t)gji_cupti_cfg.flush_ms);
  write_clock();
  __atomic_store_n(&subscribed, !gji_cupti_cfg.no_subscriber, __ATOMIC_RELEASE);
  __atomic_store_n(&recording, 1, __ATOMIC_RELEASE);
  return true;
}

static bool load(void);

bool gji_cupti_attach(void)
{
  bool ok = true;
  pthread_mutex_lock(&yield_lock);
  if (cuda_up && started_pid == getpid() && !__atomic_load_n(&recording, __ATOMIC_ACQUIRE))
    ok = load() && attach(true);
  pthread_mutex_unlock(&yield_lock);
  return ok;
}

/* CUPTI off, as if it had never been set up: what it holds is written out first; cuptiFinalize
 * gives the process its uninstrumented launch cost back (a later attach sets it up again). */
/* The detach itself, under `yield_lock`. steps.c calls it at the boundary after the one that
 * ended the last active step: flushing and cuptiFinalize take milliseconds, which the step it
 * ends (recorded by nobody) bears rather than the last active one. */
static void *detaching(void *arg)
{
  bool finalize = arg != NULL;
  pthread_mutex_lock(&yield_lock);
  if (loaded && started_pid == getpid() && __atomic_load_n(&recording, __ATOMIC_ACQUIRE)) {
    /* the activity stops (launches from here on pay nothing of it), then what CUPTI holds goes out */
    for (size_t i = 0; C.activity_disable && i < sizeof(kinds) / sizeof(kinds[0]); i++)
      C.activity_disable(kinds[i]);
    if (C.activity_disable && want_steps)
      C.activity_disable(CUPTI_ACTIVITY_KIND_DRIVER);
    __atomic_store_n(&recording, 0, __ATOMIC_RELEASE);
    if (C.flush_all)
      C.flush_all(1);
    /* a marker's steps are counted on through the subscriber's callbacks (its loads' too) while a
     * later cycle may come: it stays, as it is (a marker's callback may be the caller) */
    if (C.unsubscribe && C.sub && !marker) {
      C.unsubscribe(C.sub);
      C.sub = NULL;
      __atomic_store_n(&subscribed, 0, __ATOMIC_RELEASE); /* loads through driver.c's wrappers again */
    }
    if (finalize && !marker && C.finalize) { /* none of the schedule's steps is left to record */
      C.finalize();
      detached = true;
    }
  }
  pthread_mutex_unlock(&yield_lock);
  return NULL;
}

void gji_cupti_detach(bool finalize)
{
  if (loaded && started_pid == getpid() && __atomic_load_n(&recording, __ATOMIC_ACQUIRE))
    detaching(finalize ? (void *)1 : NULL);
}

/* CUPTI loaded, its settings read: at cuInit, or with a schedule at its first recorded step (a
 * process that waits has no CUPTI in it at all). false: it could not be (said in a note). */
static bool load(void)
{
  const char *budget = gji_setting(GPUJIT_RECORD_ENV_MAX_EVENTS);
  if (loaded)
    return true;
  if (!load_cupti())
    return false;
  gji_activity_init(C.next_record, C.dropped, budget && *budget ? strtoull(budget, NULL, 10) : 200000);
  gji_cupti_settings(gji_setting(GPUJIT_RECORD_ENV_LAUNCH_CALLBACKS));
  gji_cupti_note_settings();
  if (gji_cupti_cfg.unread)
    gji_activity_unread();
  gji_span_set_resolver(resolve);
  gji_buffers_prepare(2, (size_t)gji_cupti_cfg.buffer_kib << 10);
  loaded = true;
  return true;
}

/* With a schedule that waits, CUPTI is loaded ahead on a thread of its own, started at cuInit: the
 * library opened, its functions looked up, the activity buffers zeroed and touched. The first
 * warmup step's attach then costs the program only CUPTI's subscribe and enables. Loading sets
 * nothing up: no subscriber, no activity, so a launch before the warmup costs what it costs with
 * no profiler. */
static void *load_ahead(void *arg)
{
  (void)arg;
  pthread_mutex_lock(&yield_lock);
  if (cuda_up && started_pid == getpid() && !loaded)
    load();
  pthread_mutex_unlock(&yield_lock);
  return NULL;
}

static void start_load_ahead(void)
{
  pthread_t t;
  pthread_attr_t attr;
  sigset_t all, old;
  sigfillset(&all);
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are never delivered to it */
  if (pthread_create(&t, &attr, load_ahead, NULL) != 0)
    gji_note("cupti-ahead", "CUPTI could not be loaded ahead (no thread): the first warmup step loads it");
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
}

/* Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this library. */
__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
  bool now;
  if (!gji_active())
    return 1; /* the program runs on: nothing here may stop it */
  want_steps = steps.scheduled && steps.scheduled();
  if (steps.marker)
    marker = steps.marker(&marker_src);
  now = !steps.cupti_now || steps.cupti_now();
  started_pid = getpid();
  cuda_up = true;
  gji_set_gpu_flush(at_exit); /* before the exit record, however the process ends */
  atexit(at_exit);
  /* with a schedule, CUPTI waits for the first step it records (steps.c attaches it then); a
   * marker's callbacks are on from here, to count the steps before it */
  if ((now || marker) && load())
    attach(now);
  else if (!now && !marker && want_steps) {
    gji_cupti_settings(gji_setting(GPUJIT_RECORD_ENV_LAUNCH_CALLBACKS)); /* ahead=0: at the warmup, as before */
    if (!gji_cupti_cfg.no_ahead)
      start_load_ahead();
  }
  return 1;
}

/* In-process (inproc.c): CUPTI attaches to the running driver, as torch.profiler's does; no driver: said. */
void gji_cupti_inproc_start(void)
{
  const char *budget = gji_setting(GPUJIT_RECORD_ENV_MAX_EVENTS);
  if (!dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) && !dlopen("libcuda.so.1", RTLD_LAZY | RTLD_GLOBAL)) {
    gji_note("no-driver", "no CUDA driver in this process (libcuda.so.1: %s): kernels, copies, module loads and "
             "the driver's JIT are not recorded; compiles are", dlerror());
    return;
  }
  want_steps = steps.scheduled && steps.scheduled();
  marker = steps.marker ? steps.marker(&marker_src) : NULL;
  bool now = !steps.cupti_now || steps.cupti_now();
  pthread_mutex_lock(&yield_lock);
  started_pid = getpid(), cuda_up = true;
  if (loaded) /* a later session: its own trace budget */
    gji_activity_init(C.next_record, C.dropped, budget && *budget ? strtoull(budget, NULL, 10) : 200000);
  if ((now || marker) && load())
    attach(now);
  pthread_mutex_unlock(&yield_lock);
}

/* The session ends: what CUPTI holds is written, CUPTI let go (subscriber gone, cuptiFinalize'd). */
void gji_cupti_inproc_stop(void)
{
  bool was = __atomic_load_n(&recording, __ATOMIC_ACQUIRE) != 0;
  gji_kregions_finish(); /* the session's kernel regions read, their buffers freed */
  marker = NULL; /* nothing left to count: the subscriber goes too */
  gji_cupti_detach(true);
  pthread_mutex_lock(&yield_lock);
  if (loaded && C.unsubscribe && C.sub)
    C.unsubscribe(C.sub);
  C.sub = NULL;
  __atomic_store_n(&subscribed, 0, __ATOMIC_RELEASE);
  cuda_up = detached = false, marker_src = 0;
  pthread_mutex_unlock(&yield_lock);
  if (was)
    gji_activity_end_record();
  note_unresolved();
}
