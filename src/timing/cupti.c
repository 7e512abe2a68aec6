/* CUPTI loaded at run time (no link-time dependency): activity buffers, records turned into
 * gpujit's own form as buffers complete, external correlation ids tying them to gpujit's
 * activities. */
#define _GNU_SOURCE
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "compile/toolkit/toolkit.h"
#include "timing/cupti.h"

/* CUPTI asks for buffers as it fills them; 8 MiB holds about 40 000 kernel records. */
#define BUFFER_BYTES (8u << 20)

typedef struct corr {
  uint32_t correlation;
  uint64_t external;
} corr;

static struct {
  pthread_mutex_t lock;
  void *lib;
  bool loaded, started, concurrent;
  char why[512];
  CUptiResult (*enable)(CUpti_ActivityKind);
  CUptiResult (*disable)(CUpti_ActivityKind);
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*flush_all)(uint32_t);
  CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
  CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
  CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
  CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
  CUptiResult (*timestamp)(uint64_t *);
  CUptiResult (*result_string)(CUptiResult, const char **);
  CUptiResult (*enable_driver_api)(CUpti_CallbackId, uint8_t);
  CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
  CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
  CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
  CUpti_SubscriberHandle sub; /* ours, while started, where CUPTI let us subscribe */
  bool callbacks_on, external; /* the launch callbacks; external correlation records */
  char no_sub_why[256];
  int windows;              /* open timed windows (CUPTI regions), process-wide */
  uint64_t next_ids;        /* the last window's block of external ids */
  gpujit__cupti_rec *recs; /* complete records not yet taken; `external` holds the correlation id */
  size_t nrec, caprec;
  corr *corrs;
  size_t ncorr, capcorr;
  uint64_t dropped_total;
  double offset_us;
  int captures;             /* open process-wide captures */
  gpujit__cupti_rec *kept;  /* their records, whoever issued them */
  size_t nkept, capkept;
  uint64_t kept_lost;
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *result_text(CUptiResult r)
{
  const char *s = NULL;
  if (C.result_string && C.result_string(r, &s) == CUPTI_SUCCESS && s)
    return s;
  return "unknown CUPTI error";
}

static bool load(void)
{
  const char *path = gpujit__cupti_library_path(); /* the toolkit's, as gpujit profile finds it */
  if (C.loaded)
    return C.lib != NULL;
  C.loaded = true;
  if (path)
    C.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!C.lib)
    C.lib = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
  if (!C.lib) {
    snprintf(C.why, sizeof(C.why), "libcupti not found (looked under the toolkit %s: lib64, lib, extras/CUPTI/lib64, "
                                   "targets/x86_64-linux/lib; then the loader's path)",
             gpujit__cuda_root());
    return false;
  }
#define SYM(field, name)                                                                                     \
  if (!(*(void **)&C.field = dlsym(C.lib, name))) {                                                        \
    snprintf(C.why, sizeof(C.why), "libcupti lacks %s (too old a CUPTI)", name);                              \
    dlclose(C.lib);                                                                                          \
    C.lib = NULL;                                                                                            \
    return false;                                                                                            \
  }
  SYM(enable, "cuptiActivityEnable")
  SYM(disable, "cuptiActivityDisable")
  SYM(register_callbacks, "cuptiActivityRegisterCallbacks")
  SYM(flush_all, "cuptiActivityFlushAll")
  SYM(next_record, "cuptiActivityGetNextRecord")
  SYM(dropped, "cuptiActivityGetNumDroppedRecords")
  SYM(push, "cuptiActivityPushExternalCorrelationId")
  SYM(pop, "cuptiActivityPopExternalCorrelationId")
  SYM(timestamp, "cuptiGetTimestamp")
  SYM(result_string, "cuptiGetResultString")
  SYM(enable_driver_api, "cuptiActivityEnableDriverApi")
  SYM(subscribe, "cuptiSubscribe")
  SYM(unsubscribe, "cuptiUnsubscribe")
  SYM(enable_callback, "cuptiEnableCallback")
#undef SYM
  return true;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
  *buffer = aligned_alloc(8, BUFFER_BYTES);
  *size = *buffer ? BUFFER_BYTES : 0;
  *max_records = 0; /* as many as fit */
}

/* A process-wide capture keeps at most this many records (about 200 MiB). */
#define MAX_KEPT ((size_t)1 << 20)

/* Under the lock. */
static void add_rec(const gpujit__cupti_rec *r)
{
  if (C.captures) {
    gpujit__cupti_rec *k = C.nkept < MAX_KEPT ? gpujit__grow(C.kept, &C.capkept, C.nkept, sizeof(*k), 1024) : NULL;
    if (k) {
      C.kept = k;
      C.kept[C.nkept++] = *r;
    } else {
      C.kept_lost++;
    }
  }
  gpujit__cupti_rec *p = gpujit__grow(C.recs, &C.caprec, C.nrec, sizeof(*p), 1024);
  if (!p) {
    C.dropped_total++;
    return;
  }
  C.recs = p;
  C.recs[C.nrec++] = *r;
}

static void add_corr(uint32_t correlation, uint64_t external)
{
  corr *p = gpujit__grow(C.corrs, &C.capcorr, C.ncorr, sizeof(*p), 1024);
  if (!p)
    return;
  C.corrs = p;
  C.corrs[C.ncorr++] = (corr){correlation, external};
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
  CUpti_Activity *a = NULL;
  size_t dropped = 0;
  (void)size;
  pthread_mutex_lock(&C.lock);
  while (valid && C.next_record(buffer, valid, &a) == CUPTI_SUCCESS) {
    gpujit__cupti_rec r;
    memset(&r, 0, sizeof(r));
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
      r.kind = 0;
      r.external = k->correlationId;
      r.start = k->start;
      r.end = k->end;
      r.graph_node = k->graphNodeId;
      r.graph_id = k->graphId;
      r.device = k->deviceId;
      snprintf(r.name, sizeof(r.name), "%s", k->name ? k->name : "");
      add_rec(&r);
      break;
    }
#define COPY_OR_SET(type, k)                                                                               \
  {                                                                                                        \
    const type *m = (const type *)a;                                                                       \
    r.kind = k;                                                                                            \
    r.external = m->correlationId;                                                                         \
    r.start = m->start;                                                                                    \
    r.end = m->end;                                                                                        \
    r.bytes = m->bytes;                                                                                    \
    r.device = m->deviceId;                                                                                \
    add_rec(&r);                                                                                           \
    break;                                                                                                 \
  }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      r.copy_kind = ((const CUpti_ActivityMemcpy6 *)a)->copyKind;
      COPY_OR_SET(CUpti_ActivityMemcpy6, 1)
    case CUPTI_ACTIVITY_KIND_MEMSET:
      COPY_OR_SET(CUpti_ActivityMemset4, 2)
#undef COPY_OR_SET
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *)a;
      if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        add_corr(e->correlationId, e->externalId);
      break;
    }
    default: /* the driver API records that carry the correlations */
      break;
    }
  }
  if (C.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS)
    C.dropped_total += dropped;
  pthread_mutex_unlock(&C.lock);
  free(buffer);
}

static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

/* CUPTI's correlation id of this thread's last timed driver call, written by on_call. */
_Thread_local uint32_t gpujit__cupti_corr;

/* Our subscriber's callback: at a timed call's entry its correlation id (the one its kernel,
 * copy or memset records will carry) for the timer to read after the call; a context call's
 * callbacks are cupti_ctx.c's. */
static void CUPTIAPI on_call(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *data)
{
  const CUpti_CallbackData *cb = data;
  (void)ud;
  if (!gpujit__cupti_ctx_call(domain, id) && domain == CUPTI_CB_DOMAIN_DRIVER_API &&
      cb->callbackSite == CUPTI_API_ENTER)
    gpujit__cupti_corr = cb->correlationId;
}

/* The calls gpujit issues timed activities with: the callback's, and with external ids the driver
 * API records' (CUPTI writes an external correlation only for an API call it records, and with
 * those on, for no others: measured, without them no correlation came). */
static const CUpti_CallbackId traced_calls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,           CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,        CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,         CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync,       CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync};

void gpujit__cupti_callbacks(bool on)
{
  if (!C.sub)
    return;
  for (size_t i = 0; i < sizeof(traced_calls) / sizeof(traced_calls[0]); i++)
    C.enable_callback(on, C.sub, CUPTI_CB_DOMAIN_DRIVER_API, traced_calls[i]);
  C.callbacks_on = on;
}

bool gpujit__cupti_by_callback(void) { return C.started && C.sub && C.callbacks_on; }

const char *gpujit__cupti_no_callback_why(void) { return C.no_sub_why; }

int gpujit__cupti_external(bool on)
{
  CUptiResult r;
  if (!C.lib || on == C.external)
    return 0;
  if (!on) {
    C.disable(CUPTI_ACTIVITY_KIND_DRIVER);
    C.disable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    C.external = false;
    return 0;
  }
  if ((r = C.enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) != CUPTI_SUCCESS ||
      (r = C.enable(CUPTI_ACTIVITY_KIND_DRIVER)) != CUPTI_SUCCESS)
    return gpujit__error(GPUJIT_EUNSUPPORTED, "CUPTI's external correlation ids are unavailable: cuptiActivityEnable: %s",
                         result_text(r));
  /* Driver API records on, then off for every call but those (enabling the few alone gave no
   * records on CUDA 13.0's CUPTI: measured on the H100 host; enabling the kind again undoes
   * the per-call settings, so they are made each time). */
  for (CUpti_CallbackId cb = 1; cb < CUPTI_DRIVER_TRACE_CBID_SIZE; cb++) {
    bool keep = false;
    for (size_t i = 0; i < sizeof(traced_calls) / sizeof(traced_calls[0]) && !keep; i++)
      keep = traced_calls[i] == cb;
    if (!keep)
      C.enable_driver_api(cb, 0);
  }
  C.external = true;
  return 0;
}

/* One callback of our subscriber on or off, for cupti_ctx.c. */
static bool enable_one(bool on, int domain, uint32_t id)
{
  return C.enable_callback(on, C.sub, (CUpti_CallbackDomain)domain, id) == CUPTI_SUCCESS;
}

int gpujit__cupti_tie(void)
{
  CUptiResult r;
  if (!C.started || C.sub)
    return 0;
  if ((r = C.subscribe(&C.sub, on_call, NULL)) != CUPTI_SUCCESS) {
    /* someone else's already: timed activities are tied by external ids */
    C.sub = NULL;
    snprintf(C.no_sub_why, sizeof(C.no_sub_why), "cuptiSubscribe: %s", result_text(r));
    return gpujit__cupti_external(true);
  }
  C.no_sub_why[0] = '\0';
  gpujit__cupti_callbacks(true);
  gpujit__cupti_ctx_watch(true, enable_one);
  return 0;
}

int gpujit__cupti_start(bool concurrent)
{
  CUptiResult r;
  uint64_t ts = 0;
  pthread_mutex_lock(&C.lock);
  if (!load()) {
    pthread_mutex_unlock(&C.lock);
    return gpujit__error(GPUJIT_EUNSUPPORTED, "CUPTI timing is unavailable: %s", C.why);
  }
  pthread_mutex_unlock(&C.lock);
  if (C.started && C.concurrent == concurrent)
    return 0;
  if (C.started) /* the other kernel kind: switch */
    C.disable(C.concurrent ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL);
  else if ((r = C.register_callbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS)
    return gpujit__error(GPUJIT_EUNSUPPORTED, "CUPTI timing is unavailable: cuptiActivityRegisterCallbacks: %s",
                         result_text(r));
  if ((r = C.enable(concurrent ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL)) != CUPTI_SUCCESS)
    return gpujit__error(GPUJIT_EUNSUPPORTED, "CUPTI timing is unavailable: cuptiActivityEnable: %s", result_text(r));
  for (size_t i = 0; !C.started && i < sizeof(kinds) / sizeof(kinds[0]); i++)
    if ((r = C.enable(kinds[i])) != CUPTI_SUCCESS)
      return gpujit__error(GPUJIT_EUNSUPPORTED, "CUPTI timing is unavailable: cuptiActivityEnable: %s",
                           result_text(r));
  /* CUPTI's clock against the trace clock, sampled back to back. */
  if (C.timestamp(&ts) == CUPTI_SUCCESS)
    C.offset_us = (double)ts / 1e3 - gpujit__now_us();
  C.started = true;
  C.concurrent = concurrent;
  return 0;
}

void gpujit__cupti_stop(void)
{
  if (!C.started)
    return;
  C.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  C.disable(C.concurrent ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL);
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
    C.disable(kinds[i]);
  gpujit__cupti_external(false);
  if (C.sub) { /* CUPTI's one subscriber is free again for a profiler the program starts later */
    gpujit__cupti_ctx_watch(false, enable_one);
    gpujit__cupti_callbacks(false);
    C.unsubscribe(C.sub);
    C.sub = NULL;
  }
  C.started = false;
}

uint64_t gpujit__cupti_window_open(void)
{
  uint64_t base;
  pthread_mutex_lock(&C.lock);
  C.windows++;
  base = C.next_ids += (uint64_t)1 << 32; /* from 2^32: below the benchmark's, never 0 */
  pthread_mutex_unlock(&C.lock);
  return base;
}

void gpujit__cupti_window_close(void)
{
  pthread_mutex_lock(&C.lock);
  C.windows--;
  pthread_mutex_unlock(&C.lock);
}

void gpujit__cupti_push(uint64_t id)
{
  if (C.started)
    C.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void gpujit__cupti_pop(void)
{
  uint64_t last;
  if (C.started)
    C.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

static int cmp_corr(const void *a, const void *b)
{
  const corr *x = a, *y = b;
  return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

/* Under the lock, the correlations sorted: the gpujit id a CUPTI correlation id was issued under. */
static corr *corr_of(uint32_t correlation)
{
  corr key = {correlation, 0};
  return C.ncorr ? bsearch(&key, C.corrs, C.ncorr, sizeof(*C.corrs), cmp_corr) : NULL;
}

int gpujit__cupti_take(gpujit__cupti_rec **out, size_t *count, uint64_t first, uint64_t last, uint64_t *dropped)
{
  gpujit__cupti_rec *res = NULL;
  size_t n = 0, cap = 0, keep = 0;
  int err = 0;
  *out = NULL;
  *count = 0;
  if (C.started)
    C.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  pthread_mutex_lock(&C.lock);
  if (C.ncorr)
    qsort(C.corrs, C.ncorr, sizeof(*C.corrs), cmp_corr);
  for (size_t i = 0; i < C.nrec; i++) {
    gpujit__cupti_rec r = C.recs[i];
    corr *hit = corr_of((uint32_t)r.external);
    gpujit__cupti_rec *p;
    /* After a forced flush a record's correlation has come (CUPTI writes it when the call is
     * made): one without is not tied by an id (kept while a window may claim it by its
     * correlation). One after `last` is a later region's: kept. */
    if (!hit) {
      if (C.windows)
        C.recs[keep++] = C.recs[i];
      continue;
    }
    r.external = hit->external;
    if (r.external > last || r.external < first) {
      /* a later region's, or another window's: kept (an earlier one's, none open: done with) */
      if (r.external > last || C.windows)
        C.recs[keep++] = C.recs[i];
      continue;
    }
    if (!(p = gpujit__grow(res, &cap, n, sizeof(*p), 64))) {
      err = GPUJIT_ENOMEM;
      break;
    }
    res = p;
    res[n++] = r;
  }
  gpujit__log(GPUJIT_LOG_DEBUG, "cupti: %zu records held, %zu correlations, %zu taken for ids %llu..%llu", C.nrec,
              C.ncorr, n, (unsigned long long)first, (unsigned long long)last);
  C.nrec = keep;
  { /* correlations of what was taken are done with */
    size_t kc = 0;
    for (size_t i = 0; i < C.ncorr; i++)
      if (C.corrs[i].external > last || (C.windows && C.corrs[i].external < first))
        C.corrs[kc++] = C.corrs[i];
    C.ncorr = kc;
  }
  if (dropped)
    *dropped = C.dropped_total;
  pthread_mutex_unlock(&C.lock);
  if (err < 0) {
    free(res);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  *out = res;
  *count = n;
  return 0;
}

static int cmp_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

int gpujit__cupti_take_corr(gpujit__cupti_rec **out, size_t *count, const uint32_t *ids, size_t nids,
                            uint64_t *dropped)
{
  gpujit__cupti_rec *res = NULL;
  size_t n = 0, cap = 0, keep = 0;
  int err = 0;
  *out = NULL;
  *count = 0;
  if (C.started)
    C.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  pthread_mutex_lock(&C.lock);
  if (C.ncorr)
    qsort(C.corrs, C.ncorr, sizeof(*C.corrs), cmp_corr);
  for (size_t i = 0; i < C.nrec; i++) {
    uint32_t id = (uint32_t)C.recs[i].external;
    gpujit__cupti_rec *p;
    if (!nids || !bsearch(&id, ids, nids, sizeof(*ids), cmp_u32)) {
      /* another's: an external id's taker, or a window still open (another device's) */
      if (C.windows || corr_of(id))
        C.recs[keep++] = C.recs[i];
      continue;
    }
    if (!(p = gpujit__grow(res, &cap, n, sizeof(*p), 64))) {
      err = GPUJIT_ENOMEM;
      C.recs[keep++] = C.recs[i];
      continue;
    }
    res = p;
    res[n++] = C.recs[i];
  }
  gpujit__log(GPUJIT_LOG_DEBUG, "cupti: %zu records held, %zu taken by correlation id, %zu kept", C.nrec, n, keep);
  C.nrec = keep;
  if (dropped)
    *dropped = C.dropped_total;
  pthread_mutex_unlock(&C.lock);
  if (err < 0) {
    free(res);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  *out = res;
  *count = n;
  return 0;
}

double gpujit__cupti_clock_offset_us(void) { return C.offset_us; }

int gpujit__cupti_capture_open(void)
{
  int err = 0;
  if (!C.started && (err = gpujit__cupti_start(true)) < 0)
    return err;
  pthread_mutex_lock(&C.lock);
  C.captures++;
  pthread_mutex_unlock(&C.lock);
  return 0;
}

void gpujit__cupti_capture_close(void)
{
  pthread_mutex_lock(&C.lock);
  if (C.captures > 0 && --C.captures == 0) {
    free(C.kept);
    C.kept = NULL;
    C.nkept = C.capkept = 0;
    C.kept_lost = 0;
  }
  pthread_mutex_unlock(&C.lock);
}

uint64_t gpujit__cupti_now_ns(void)
{
  uint64_t ts = 0;
  if (C.lib && C.timestamp)
    C.timestamp(&ts);
  return ts;
}

static int cmp_start(const void *a, const void *b)
{
  const gpujit__cupti_rec *x = a, *y = b;
  return (x->start > y->start) - (x->start < y->start);
}

/* Under the lock, after a forced flush: drop the timers' held records that carry no gpujit
 * correlation (other frameworks' work, which only a capture keeps) while no timed window is open
 * (its records are tied by their own correlation ids when it closes). */
static void drop_foreign(void)
{
  size_t keep = 0;
  if (C.ncorr)
    qsort(C.corrs, C.ncorr, sizeof(*C.corrs), cmp_corr);
  for (size_t i = 0; i < C.nrec; i++)
    if (C.windows || corr_of((uint32_t)C.recs[i].external)) /* an open window may claim any */
      C.recs[keep++] = C.recs[i];
  C.nrec = keep;
}

int gpujit__cupti_capture_take(gpujit__cupti_rec **out, size_t *count, uint64_t t0, uint64_t t1, uint64_t *lost)
{
  gpujit__cupti_rec *res = NULL;
  size_t n = 0;
  *out = NULL;
  *count = 0;
  if (C.started)
    C.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  pthread_mutex_lock(&C.lock);
  drop_foreign();
  for (size_t i = 0; i < C.nkept; i++)
    n += C.kept[i].start >= t0 && C.kept[i].start <= t1;
  if (n && !(res = malloc(n * sizeof(*res)))) {
    pthread_mutex_unlock(&C.lock);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  n = 0;
  for (size_t i = 0; i < C.nkept; i++)
    if (C.kept[i].start >= t0 && C.kept[i].start <= t1)
      res[n++] = C.kept[i];
  if (lost)
    *lost = C.kept_lost + C.dropped_total;
  pthread_mutex_unlock(&C.lock);
  if (n)
    qsort(res, n, sizeof(*res), cmp_start);
  *out = res;
  *count = n;
  return 0;
}
