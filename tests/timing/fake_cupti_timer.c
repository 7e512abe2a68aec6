/* A stand-in CUPTI for the timers' CPU tests (test_timer_path.c, loaded by timing/cupti.c as the
 * toolkit's libcupti): one subscriber, whose callback the test's fake driver calls at a traced
 * call's entry and exit; a stack of pushed external ids, written as external-correlation records
 * when that kind is on; kernel records written into the buffers the library hands out and handed
 * back at a flush. The test drives it through the fake_timer_* functions. */
#define _GNU_SOURCE
#include <cupti.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

static CUpti_CallbackFunc subscriber;
static void *subscriber_data;
static CUpti_BuffersCallbackRequestFunc request;
static CUpti_BuffersCallbackCompleteFunc complete;
static unsigned char enabled[4096], kinds_on[128];
static uint8_t *buffer;
static size_t size, used;
static uint64_t stack[64];
static int depth;
static unsigned long pushes, callbacks, ctx_callbacks; /* callbacks: of the calls other than cuCtxSetCurrent */

API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
  if (subscriber)
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  subscriber = cb, subscriber_data = ud;
  *s = (CUpti_SubscriberHandle)&subscriber;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
  (void)s;
  subscriber = NULL;
  memset(enabled, 0, sizeof(enabled));
  return CUPTI_SUCCESS;
}

static int refuse_runtime; /* runtime callbacks refused, as a CUPTI without them would */

API CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                    CUpti_CallbackId id)
{
  (void)s;
  if (d == CUPTI_CB_DOMAIN_RUNTIME_API && refuse_runtime)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (d == CUPTI_CB_DOMAIN_DRIVER_API && id < sizeof(enabled))
    enabled[id] = (unsigned char)(enable != 0);
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
  if ((unsigned)k < sizeof(kinds_on))
    kinds_on[k] = 1;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
  if ((unsigned)k < sizeof(kinds_on))
    kinds_on[k] = 0;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
  (void)cbid, (void)enable;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                               CUpti_BuffersCallbackCompleteFunc done)
{
  request = req, complete = done;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetTimestamp(uint64_t *t)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  *t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
  *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "another subscriber" : "fake";
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t stream, size_t *n)
{
  (void)c, (void)stream;
  *n = 0;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t id)
{
  (void)k;
  pushes++;
  stack[depth++] = id;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t *id)
{
  (void)k;
  *id = depth ? stack[--depth] : 0;
  return CUPTI_SUCCESS;
}

static size_t record_size(CUpti_ActivityKind k)
{
  return k == CUPTI_ACTIVITY_KIND_KERNEL || k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ? sizeof(CUpti_ActivityKernel10)
         : k == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION ? sizeof(CUpti_ActivityExternalCorrelation)
                                                         : 0;
}

API CUptiResult cuptiActivityGetNextRecord(uint8_t *b, size_t valid, CUpti_Activity **r)
{
  uint8_t *at = *r ? (uint8_t *)*r + record_size((*r)->kind) : b;
  if (at >= b + valid)
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *r = (CUpti_Activity *)at;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
  (void)flag;
  if (buffer)
    complete(NULL, 0, buffer, size, used);
  buffer = NULL, size = used = 0;
  return CUPTI_SUCCESS;
}

static void *room(size_t n)
{
  size_t max = 0;
  if (!request)
    return NULL;
  if (buffer && used + n > size)
    cuptiActivityFlushAll(0);
  if (!buffer) {
    request(&buffer, &size, &max);
    if (!buffer || size < n)
      return NULL;
  }
  memset(buffer + used, 0, n);
  used += n;
  return buffer + used - n;
}

/* -- driven by the test -- */

/** A driver call `cbid` with correlation id `corr`: its callbacks (enter, exit) where enabled and
 *  `callback` is set, and its external correlation where an id is pushed and the kind is on. */
API void fake_timer_call(CUpti_CallbackId cbid, uint32_t corr, int callback);
void fake_timer_call(CUpti_CallbackId cbid, uint32_t corr, int callback)
{
  CUresult result = CUDA_SUCCESS;
  CUpti_CallbackData d = {.functionName = "cuLaunchKernel", .correlationId = corr, .functionReturnValue = &result};
  if (depth && kinds_on[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION]) {
    CUpti_ActivityExternalCorrelation *e = room(sizeof(*e));
    if (e) {
      e->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      e->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
      e->externalId = stack[depth - 1];
      e->correlationId = corr;
    }
  }
  if (!callback || cbid >= sizeof(enabled) || !enabled[cbid] || !subscriber)
    return;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent)
    ctx_callbacks++;
  else
    callbacks++;
  d.callbackSite = CUPTI_API_ENTER;
  subscriber(subscriber_data, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
  d.callbackSite = CUPTI_API_EXIT;
  subscriber(subscriber_data, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
}

/** A kernel record of call `corr` (written where a kernel kind is on). */
API void fake_timer_kernel(uint32_t corr, const char *name, uint32_t device, uint64_t start, uint64_t end);
void fake_timer_kernel(uint32_t corr, const char *name, uint32_t device, uint64_t start, uint64_t end)
{
  CUpti_ActivityKernel10 *k;
  if (!kinds_on[CUPTI_ACTIVITY_KIND_KERNEL] && !kinds_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
    return;
  if (!(k = room(sizeof(*k))))
    return;
  k->kind = kinds_on[CUPTI_ACTIVITY_KIND_KERNEL] ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k->correlationId = corr;
  k->name = name;
  k->deviceId = device;
  k->start = start;
  k->end = end;
}

/** External ids pushed so far; callbacks made so far (cuCtxSetCurrent's apart). */
API void fake_timer_counts(unsigned long *pushed, unsigned long *called);
void fake_timer_counts(unsigned long *pushed, unsigned long *called)
{
  *pushed = pushes, *called = callbacks;
}

/** cuCtxSetCurrent's callbacks made so far. */
API unsigned long fake_timer_ctx_callbacks(void);
unsigned long fake_timer_ctx_callbacks(void) { return ctx_callbacks; }

/** Refuse (1) or take (0) the runtime domain's callbacks from now on. */
API void fake_timer_refuse_runtime(int refuse);
void fake_timer_refuse_runtime(int refuse) { refuse_runtime = refuse; }
