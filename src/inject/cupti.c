/*
 * The GPU side of a profile, through CUPTI, started by the driver's injection hook
 * (CUDA_INJECTION64_PATH names this library; the driver calls InitializeInjection at cuInit):
 *   - module loads (cuModuleLoad*, cuLibraryLoad*, cuLinkComplete) from driver callbacks: the
 *     image's kind, size and hash, wall time, handle, correlation id;
 *   - launches: the module each launch's function belongs to, by correlation id (spans.c);
 *   - activity: kernels (the concurrent kind, which leaves the program's concurrency alone),
 *     copies, memsets, the driver's JIT (PTX to cubin, its cache) and NVTX ranges.
 * Activity comes in buffers; each completed buffer adds per-kernel sums to the record file (so
 * a process that ends in _exit or a crash keeps what was flushed), and per-launch lines while
 * the trace budget lasts ($GPUJIT_PROFILE_MAX_EVENTS, default 200000 per process); past it the
 * launches are still summed, and the count of those left out of the trace is written.
 * CUPTI taken by someone else (Nsight Systems or Compute attached, the program subscribed first):
 * a note says so once; compiles are still recorded, and module loads by driver.c's wrappers. The
 * program taking CUPTI later (PyTorch's profiler) finds gpujit stepping aside (gji_cupti_yield):
 * its profiler works as it would without gpujit.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inject/protocol.h"
#include "inject/buffers.h"
#include "inject/image.h"
#include "inject/cupti.h"
#include "inject/resolve.h"
#include "inject/nvtx.h"
#include "inject/record.h"
#include "inject/spans.h"

#define MAX_SUMS 4096 /* distinct (module, kernel, device) per buffer */

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
  CUresult (*func_get_module)(CUmodule *, CUfunction);
  CUresult (*kernel_get_library)(CUlibrary *, CUkernel);
  CUpti_SubscriberHandle sub;
  pthread_mutex_t lock;
  uint64_t budget, traced, untraced, dropped_records, unattributed;
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Per thread: the load under way (its enter callback; the exit callback writes the record). */
static __thread uint64_t load_t0;

static void on_load(CUpti_CallbackId id, const CUpti_CallbackData *cb)
{
  const void *p = cb->functionParams;
  uint64_t handle = 0;
  gji_line l;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    load_t0 = gji_now();
    return;
  }
  gji_begin(&l, GPUJIT_KIND(LOAD));
  gji_str(&l, "api", cb->functionName);
  gji_u64(&l, "corr", cb->correlationId);
  gji_u64(&l, "t0", load_t0);
  gji_u64(&l, "t1", gji_now());
  gji_i64(&l, "result", cb->functionReturnValue ? (int64_t) * (const CUresult *)cb->functionReturnValue : -1);
  switch (id) {
  case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData:
    gji_image_fields(&l, ((const cuModuleLoadData_params *)p)->image);
    handle = (uint64_t)(uintptr_t) * ((const cuModuleLoadData_params *)p)->module;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx:
    gji_image_fields(&l, ((const cuModuleLoadDataEx_params *)p)->image);
    handle = (uint64_t)(uintptr_t) * ((const cuModuleLoadDataEx_params *)p)->module;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary:
    gji_image_fields(&l, ((const cuModuleLoadFatBinary_params *)p)->fatCubin);
    handle = (uint64_t)(uintptr_t) * ((const cuModuleLoadFatBinary_params *)p)->module;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleLoad:
    gji_file_fields(&l, ((const cuModuleLoad_params *)p)->fname);
    handle = (uint64_t)(uintptr_t) * ((const cuModuleLoad_params *)p)->module;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData:
    gji_image_fields(&l, ((const cuLibraryLoadData_params *)p)->code);
    handle = (uint64_t)(uintptr_t) * ((const cuLibraryLoadData_params *)p)->library;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadFromFile:
    gji_file_fields(&l, ((const cuLibraryLoadFromFile_params *)p)->fileName);
    handle = (uint64_t)(uintptr_t) * ((const cuLibraryLoadFromFile_params *)p)->library;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLinkComplete: {
    const cuLinkComplete_params *lc = p;
    if (lc->cubinOut && lc->sizeOut)
      gji_linked_fields(&l, *lc->cubinOut, *lc->sizeOut);
    break;
  }
  default:
    break;
  }
  if (handle)
    gji_hex(&l, "module", handle);
  gji_end(&l);
}

/* Each thread remembers the modules of the functions it launched last (a loop launches a few
 * over and over): the driver is asked once. An unload forgets them all (a handle may come back
 * for another module). */
#define FN_MEMO 8
static uint64_t unloads;
static __thread struct {
  CUfunction f;
  uint64_t module, unloads;
} fn_memo[FN_MEMO];
static __thread unsigned fn_next;

static uint64_t module_of(CUfunction f)
{
  uint64_t gen = __atomic_load_n(&unloads, __ATOMIC_ACQUIRE), module = 0;
  CUmodule m = NULL;
  CUlibrary lib = NULL;
  for (unsigned i = 0; i < FN_MEMO; i++)
    if (fn_memo[i].f == f && fn_memo[i].unloads == gen)
      return fn_memo[i].module;
  if (C.func_get_module && C.func_get_module(&m, f) == CUDA_SUCCESS)
    module = (uint64_t)(uintptr_t)m;
  else if (C.kernel_get_library && C.kernel_get_library(&lib, (CUkernel)f) == CUDA_SUCCESS)
    module = (uint64_t)(uintptr_t)lib;
  else
    return 0; /* not remembered: asked again next time */
  fn_memo[fn_next].f = f, fn_memo[fn_next].module = module, fn_memo[fn_next].unloads = gen;
  fn_next = (fn_next + 1) % FN_MEMO;
  return module;
}

/* A launch: which module its function is in, kept by correlation id until its kernel record. */
static void on_launch(CUpti_CallbackId id, const CUpti_CallbackData *cb)
{
  CUfunction f = NULL;
  if (cb->callbackSite != CUPTI_API_ENTER)
    return;
  if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz)
    f = ((const cuLaunchKernelEx_params *)cb->functionParams)->f;
  else /* cuLaunchKernel and cuLaunchCooperativeKernel (and _ptsz) start with the function */
    f = *(const CUfunction *)cb->functionParams;
  gji_span_launch(cb->correlationId, module_of(f));
}

static void CUPTIAPI callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *data)
{
  (void)ud;
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  switch (id) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    on_launch(id, data);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleUnload:
  case CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload:
    if (((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_ENTER)
      __atomic_add_fetch(&unloads, 1, __ATOMIC_ACQ_REL);
    break;
  default:
    on_load(id, data);
  }
}

typedef struct sum {
  uint64_t module;
  const char *name;
  uint32_t device;
  uint64_t n, ns;
} sum;

static void add_sum(sum *s, size_t *ns, uint64_t module, const char *name, uint32_t device, uint64_t dur)
{
  for (size_t i = 0; i < *ns; i++)
    if (s[i].module == module && s[i].device == device && s[i].name == name) {
      s[i].n++, s[i].ns += dur;
      return;
    }
  if (*ns == MAX_SUMS) { /* written out and started again: nothing is dropped */
    for (size_t i = 0; i < *ns; i++) {
      gji_line l;
      gji_begin(&l, GPUJIT_KIND(KSUM));
      gji_hex(&l, "module", s[i].module);
      gji_str(&l, "name", s[i].name);
      gji_u64(&l, "device", s[i].device);
      gji_u64(&l, "n", s[i].n);
      gji_u64(&l, "ns", s[i].ns);
      gji_end(&l);
    }
    *ns = 0;
  }
  s[(*ns)++] = (sum){module, name, device, 1, dur};
}

/* A traced activity (a kernel, copy or memset) while the budget lasts. */
static bool trace_one(void)
{
  bool yes;
  pthread_mutex_lock(&C.lock);
  yes = C.traced < C.budget;
  if (yes)
    C.traced++;
  else
    C.untraced++;
  pthread_mutex_unlock(&C.lock);
  return yes;
}

static void one_kernel(const CUpti_ActivityKernel10 *k, sum *sums, size_t *ns)
{
  uint64_t module = 0;
  if (!gji_span_module(k->correlationId, &module))
    __atomic_fetch_add(&C.unattributed, 1, __ATOMIC_RELAXED);
  add_sum(sums, ns, module, k->name, k->deviceId, k->end - k->start);
  if (trace_one()) {
    gji_line l;
    gji_begin(&l, GPUJIT_KIND(KERNEL));
    gji_str(&l, "name", k->name);
    gji_hex(&l, "module", module);
    gji_u64(&l, "device", k->deviceId);
    gji_u64(&l, "stream", k->streamId);
    gji_u64(&l, "corr", k->correlationId);
    gji_u64(&l, "s", k->start);
    gji_u64(&l, "e", k->end);
    gji_end(&l);
  }
}

static void sums_out(const sum *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    gji_line l;
    gji_begin(&l, GPUJIT_KIND(KSUM));
    gji_hex(&l, "module", s[i].module);
    gji_str(&l, "name", s[i].name);
    gji_u64(&l, "device", s[i].device);
    gji_u64(&l, "n", s[i].n);
    gji_u64(&l, "ns", s[i].ns);
    gji_end(&l);
  }
}

static const char *copy_kind(uint8_t k)
{
  switch (k) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    return "HtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    return "DtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    return "DtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
    return "PtoP";
  default:
    return "other";
  }
}

/* Copies and memsets of one buffer, summed by kind and device. */
typedef struct opsum {
  const char *k, *what;
  uint32_t device;
  uint64_t n, bytes, ns;
} opsum;
#define MAX_OPSUMS 64

static void add_op(opsum *o, size_t *n, const char *k, const char *what, uint32_t device, uint64_t bytes, uint64_t ns)
{
  for (size_t i = 0; i < *n; i++)
    if (o[i].k == k && o[i].what == what && o[i].device == device) {
      o[i].n++, o[i].bytes += bytes, o[i].ns += ns;
      return;
    }
  if (*n < MAX_OPSUMS)
    o[(*n)++] = (opsum){k, what, device, 1, bytes, ns};
  else
    gji_lost(1);
}

static void gpu_op(const char *k, const char *what, uint32_t device, uint32_t stream, uint32_t corr, uint64_t bytes,
                   uint64_t s, uint64_t e)
{
  gji_line l;
  if (!trace_one())
    return;
  gji_begin(&l, k);
  gji_str(&l, "what", what);
  gji_u64(&l, "device", device);
  gji_u64(&l, "stream", stream);
  gji_u64(&l, "corr", corr);
  gji_u64(&l, "bytes", bytes);
  gji_u64(&l, "s", s);
  gji_u64(&l, "e", e);
  gji_end(&l);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
  CUpti_Activity *a = NULL;
  sum *sums = calloc(MAX_SUMS, sizeof(*sums));
  opsum ops[MAX_OPSUMS];
  size_t ns = 0, nops = 0, dropped = 0;
  (void)size;
  gji_batch_begin();
  while (valid && C.next_record(buffer, valid, &a) == CUPTI_SUCCESS) {
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
      if (sums)
        one_kernel((const CUpti_ActivityKernel10 *)a, sums, &ns);
      else
        gji_lost(1);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const CUpti_ActivityMemcpy6 *m = (const void *)a;
      add_op(ops, &nops, GPUJIT_KIND(COPY), copy_kind(m->copyKind), m->deviceId, m->bytes, m->end - m->start);
      gpu_op(GPUJIT_KIND(COPY), copy_kind(m->copyKind), m->deviceId, m->streamId, m->correlationId, m->bytes, m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const CUpti_ActivityMemset4 *m = (const void *)a;
      add_op(ops, &nops, GPUJIT_KIND(MEMSET), "memset", m->deviceId, m->bytes, m->end - m->start);
      gpu_op(GPUJIT_KIND(MEMSET), "memset", m->deviceId, m->streamId, m->correlationId, m->bytes, m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_JIT: {
      const CUpti_ActivityJit2 *j = (const void *)a;
      gji_line l;
      gji_begin(&l, GPUJIT_KIND(JIT));
      gji_str(&l, "entry",
              j->jitEntryType == CUPTI_ACTIVITY_JIT_ENTRY_PTX_TO_CUBIN     ? "ptx-to-cubin"
              : j->jitEntryType == CUPTI_ACTIVITY_JIT_ENTRY_NVVM_IR_TO_PTX ? "nvvm-ir-to-ptx"
                                                                           : "other");
      gji_str(&l, "op",
              j->jitOperationType == CUPTI_ACTIVITY_JIT_OPERATION_CACHE_LOAD    ? "cache-load"
              : j->jitOperationType == CUPTI_ACTIVITY_JIT_OPERATION_CACHE_STORE ? "cache-store"
              : j->jitOperationType == CUPTI_ACTIVITY_JIT_OPERATION_COMPILE     ? "compile"
                                                                                : "other");
      gji_u64(&l, "device", j->deviceId);
      gji_u64(&l, "corr", j->correlationId);
      gji_u64(&l, "s", j->start);
      gji_u64(&l, "e", j->end);
      gji_end(&l);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
      gji_nvtx_marker((const CUpti_ActivityMarker2 *)a);
      break;
    default:
      break;
    }
  }
  sums_out(sums, ns);
  free(sums);
  for (size_t i = 0; i < nops; i++) {
    gji_line l;
    gji_begin(&l, GPUJIT_KIND(OSUM));
    gji_str(&l, "op", ops[i].k);
    gji_str(&l, "what", ops[i].what);
    gji_u64(&l, "device", ops[i].device);
    gji_u64(&l, "n", ops[i].n);
    gji_u64(&l, "bytes", ops[i].bytes);
    gji_u64(&l, "ns", ops[i].ns);
    gji_end(&l);
  }
  if (C.dropped && C.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
    gji_line l;
    gji_begin(&l, GPUJIT_KIND(DROPPED));
    gji_u64(&l, "records", dropped); /* CUPTI's own count: records it had no buffer for */
    gji_end(&l);
  }
  gji_batch_end();
  gji_buffer_give_back(buffer);
}

static pid_t started_pid;
static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                           CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_JIT,
                                           CUPTI_ACTIVITY_KIND_MARKER};
/* Whether this library's CUPTI subscriber records module loads (else driver.c's wrappers do). */
static volatile int subscribed;

bool gji_cupti_records_loads(void)
{
  return __atomic_load_n(&subscribed, __ATOMIC_ACQUIRE) != 0;
}

void gji_cupti_yield(const char *api)
{
  static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&once);
  if (subscribed && started_pid == getpid()) {
    /* what was recorded goes out first; then CUPTI is left as the program would find it */
    if (C.flush_all)
      C.flush_all(1);
    if (C.activity_disable)
      for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        C.activity_disable(kinds[i]);
    if (C.unsubscribe)
      C.unsubscribe(C.sub);
    __atomic_store_n(&subscribed, 0, __ATOMIC_RELEASE);
    gji_note("cupti-yield",
             "the program took CUPTI (%s): gpujit stepped aside; kernels, copies and driver JIT "
             "after that are not recorded; compiles and module loads are",
             api);
  }
  pthread_mutex_unlock(&once);
}

/* gpujit_profile_load_range, in this process, asks for what CUPTI holds before reading records. */
__attribute__((visibility("default"))) void GPUJIT_RECORD_FLUSH_FN(void);
void GPUJIT_RECORD_FLUSH_FN(void)
{
  if (started_pid == getpid() && C.flush_all && gji_cupti_records_loads())
    C.flush_all(1);
}

static void at_exit(void)
{
  gji_line l;
  if (started_pid != getpid()) /* a forked child: CUDA is not usable there */
    return;
  started_pid = 0; /* once */
  if (C.flush_all && gji_cupti_records_loads())
    C.flush_all(1);
  gji_begin(&l, GPUJIT_KIND(GPU_END));
  pthread_mutex_lock(&C.lock);
  gji_u64(&l, "traced", C.traced);
  gji_u64(&l, "untraced", C.untraced);
  gji_u64(&l, "unattributed", C.unattributed); /* kernels older than every launch run kept */
  pthread_mutex_unlock(&C.lock);
  gji_end(&l);
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
  const char *path = getenv(GPUJIT_ENV(CUPTI_LIBRARY));
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
#undef S
  if (cuda) {
    *(void **)&C.func_get_module = gji_real_dlsym(cuda, "cuFuncGetModule");
    *(void **)&C.kernel_get_library = gji_real_dlsym(cuda, "cuKernelGetLibrary");
    dlclose(cuda);
  }
  return C.subscribe && C.enable_callback && C.activity_enable && C.register_callbacks && C.next_record;
}

/* Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this library. */
__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
  static const CUpti_CallbackId ids[] = {CUPTI_DRIVER_TRACE_CBID_cuModuleLoad,
                                         CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData,
                                         CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx,
                                         CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary,
                                         CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData,
                                         CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadFromFile,
                                         CUPTI_DRIVER_TRACE_CBID_cuLinkComplete,
                                         CUPTI_DRIVER_TRACE_CBID_cuModuleUnload,
                                         CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};
  const char *budget = getenv(GPUJIT_ENV(MAX_EVENTS));
  CUptiResult r;
  uint64_t ts = 0;
  gji_line l;
  if (!gji_active() || !load_cupti())
    return 1; /* the program runs on: nothing here may stop it */
  C.budget = budget && *budget ? strtoull(budget, NULL, 10) : 200000;
  if ((r = C.subscribe(&C.sub, callback, NULL)) != CUPTI_SUCCESS) {
    gji_note("cupti",
             "CUPTI is in use by another tool or by the program (%s): kernels, copies and driver JIT "
             "are not recorded; compiles and module loads are",
             cupti_error(r));
    return 1;
  }
  /* $GPUJIT_PROFILE_LAUNCH_CALLBACKS=0 measures what the launch callbacks cost (bench/
   * profile_overhead.py): launches are then not tied to their modules */
  const char *launch_cb = getenv(GPUJIT_ENV(LAUNCH_CALLBACKS));
  for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
    if (i < 9 /* the loads and unloads */ || !launch_cb || strcmp(launch_cb, "0"))
      C.enable_callback(1, C.sub, CUPTI_CB_DOMAIN_DRIVER_API, ids[i]);
  __atomic_store_n(&subscribed, 1, __ATOMIC_RELEASE); /* loads come through the callbacks now */
  /* the buffers this library hands CUPTI are zeroed (buffers.c): CUPTI need not */
  if (C.set_attribute) {
    uint8_t yes = 1;
    size_t len = sizeof(yes);
    C.set_attribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &yes);
  }
  gji_buffers_prepare(2);
  if ((r = C.register_callbacks(gji_buffer_request, buffer_completed)) != CUPTI_SUCCESS) {
    gji_note("cupti",
             "CUPTI activity records are unavailable (%s): kernels, copies and driver JIT are not "
             "recorded",
             cupti_error(r));
    return 1;
  }
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
    if ((r = C.activity_enable(kinds[i])) != CUPTI_SUCCESS)
      gji_note(kinds[i] == CUPTI_ACTIVITY_KIND_MARKER ? "nvtx" : "activity",
               "CUPTI activity kind %d cannot be enabled: %s", (int)kinds[i], cupti_error(r));
  if (C.flush_period)
    C.flush_period(500); /* a process that ends in _exit keeps all but the last half second */
  /* the two clocks side by side: activity times are CUPTI's */
  if (C.timestamp && C.timestamp(&ts) == CUPTI_SUCCESS) {
    gji_begin(&l, GPUJIT_KIND(CLOCK));
    gji_u64(&l, "cupti", ts);
    gji_u64(&l, "host", gji_now());
    gji_end(&l);
  }
  started_pid = getpid();
  __atomic_store_n(&subscribed, 1, __ATOMIC_RELEASE);
  gji_set_gpu_flush(at_exit); /* before the exit record, however the process ends */
  atexit(at_exit);
  return 1;
}
