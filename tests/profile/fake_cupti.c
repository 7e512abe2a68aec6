/* A stand-in CUPTI for the injection library's GPU path on machines without a GPU
 * (test_cupti_path.c, named by $GPUJIT_CUPTI_LIBRARY): the subscriber's callback is called as the
 * driver's launch would call it (enter, then exit), kernel records are written into the buffers
 * the library hands out, 216-byte CUpti_ActivityKernel10 records as CUPTI 13 writes them, and a
 * full buffer — or a flush — hands them back. One kernel name string per distinct name, as CUPTI
 * shares it among a kernel's records. The test drives it through the fake_cupti_* functions and
 * it measures the time spent in the library's buffer callback. */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

static CUpti_CallbackFunc subscriber;
static void *subscriber_data;
static CUpti_BuffersCallbackRequestFunc request;
static CUpti_BuffersCallbackCompleteFunc complete;
static unsigned char enabled[2048], resource_enabled[64];
static uint8_t *buffer;
static size_t size, used;
static uint64_t requests, complete_ns;
static uint32_t flush_period_ms = 12345;
static char *names[256];

API void fake_cupti_launch(CUpti_CallbackId cbid, uint32_t corr, CUfunction f);
static int kernel_of_launch(uint32_t corr, const char *name, uint32_t device, uint64_t start, uint64_t end,
                            uint64_t graph_node);

/* A stand-in driver that launches (tests/fakes/fake_launch_cuda.c) is told of this CUPTI while it
 * has a subscriber: its launches then come through the callbacks and write kernel records. */
static void tell_driver(int on)
{
  void (*tell)(void *, void *) = (void (*)(void *, void *))dlsym(RTLD_DEFAULT, "fake_cuda_tool");
  if (tell)
    tell(on ? (void *)fake_cupti_launch : NULL, on ? (void *)kernel_of_launch : NULL);
}

static uint64_t now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
  if (subscriber)
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  subscriber = cb, subscriber_data = ud;
  *s = (CUpti_SubscriberHandle)&subscriber;
  tell_driver(1);
  return CUPTI_SUCCESS;
}

/** Whether a subscriber is on now. */
API int fake_cupti_subscribed(void);
int fake_cupti_subscribed(void) { return subscriber != NULL; }

API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
  (void)s;
  subscriber = NULL;
  tell_driver(0);
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                    CUpti_CallbackId id)
{
  (void)s;
  if (d == CUPTI_CB_DOMAIN_DRIVER_API && id < sizeof(enabled))
    enabled[id] = (unsigned char)(enable != 0);
  if (d == CUPTI_CB_DOMAIN_RESOURCE && id < sizeof(resource_enabled))
    resource_enabled[id] = (unsigned char)(enable != 0);
  return CUPTI_SUCCESS;
}

static unsigned char kinds_on[128];

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

/** Whether activity kind `k` is enabled. */
API int fake_cupti_kind_enabled(CUpti_ActivityKind k);
int fake_cupti_kind_enabled(CUpti_ActivityKind k)
{
  return (unsigned)k < sizeof(kinds_on) && kinds_on[k];
}

API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                               CUpti_BuffersCallbackCompleteFunc done)
{
  request = req, complete = done;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute a, size_t *len, void *v)
{
  (void)a, (void)len, (void)v;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
  flush_period_ms = ms;
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetTimestamp(uint64_t *t)
{
  *t = now_ns();
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
  *s = r == CUPTI_SUCCESS ? "fake success" : "fake error";
  return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t stream, size_t *n)
{
  (void)c, (void)stream;
  *n = 0;
  return CUPTI_SUCCESS;
}

static size_t record_size(CUpti_ActivityKind k)
{
  return k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || k == CUPTI_ACTIVITY_KIND_KERNEL ? sizeof(CUpti_ActivityKernel10)
         : k == CUPTI_ACTIVITY_KIND_MEMCPY                                              ? sizeof(CUpti_ActivityMemcpy6)
                                                                                        : 0;
}

API CUptiResult cuptiActivityGetNextRecord(uint8_t *b, size_t valid, CUpti_Activity **r)
{
  uint8_t *at = *r ? (uint8_t *)*r + record_size((*r)->kind) : b;
  if (at >= b + valid)
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  if (!record_size(((CUpti_Activity *)at)->kind))
    return CUPTI_ERROR_INVALID_KIND;
  *r = (CUpti_Activity *)at;
  return CUPTI_SUCCESS;
}

/* The buffer being filled goes back to the library (timed). */
static void hand_back(void)
{
  uint64_t t0;
  if (!buffer)
    return;
  t0 = now_ns();
  complete(NULL, 0, buffer, size, used);
  complete_ns += now_ns() - t0;
  buffer = NULL, size = used = 0;
}

API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
  (void)flag;
  hand_back();
  return CUPTI_SUCCESS;
}

static void *room(size_t n)
{
  size_t max = 0;
  if (buffer && used + n > size)
    hand_back();
  if (!buffer) {
    request(&buffer, &size, &max);
    requests++;
    if (!buffer || size < n)
      return NULL;
    for (size_t i = 0; i < size; i += 4096) /* handed out zeroed, as the library tells CUPTI */
      if (buffer[i])
        return NULL;
  }
  used += n;
  return buffer + used - n;
}

static const char *interned(const char *name)
{
  size_t i = 0;
  for (; i < sizeof(names) / sizeof(names[0]) && names[i]; i++)
    if (!strcmp(names[i], name))
      return names[i];
  return i < sizeof(names) / sizeof(names[0]) ? (names[i] = strdup(name)) : NULL;
}

/* -- driven by the test -- */

/** The driver's side of a launch of `f` through the API `cbid`: enter and exit callbacks, when enabled. */
API void fake_cupti_launch(CUpti_CallbackId cbid, uint32_t corr, CUfunction f);
void fake_cupti_launch(CUpti_CallbackId cbid, uint32_t corr, CUfunction f)
{
  CUlaunchConfig config = {0};
  cuLaunchKernel_params plain = {.f = f};
  cuLaunchKernelEx_params ex = {.config = &config, .f = f};
  CUresult result = CUDA_SUCCESS;
  CUpti_CallbackData d = {.functionName = "cuLaunchKernel", .correlationId = corr, .functionReturnValue = &result};
  if (cbid >= sizeof(enabled) || !enabled[cbid] || !subscriber)
    return;
  d.functionParams = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ? (const void *)&ex : (const void *)&plain;
  d.callbackSite = CUPTI_API_ENTER;
  subscriber(subscriber_data, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
  d.callbackSite = CUPTI_API_EXIT;
  subscriber(subscriber_data, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
}

/** Another driver call the subscriber may watch (an unload), enter then exit. */
API void fake_cupti_call(CUpti_CallbackId cbid, uint32_t corr);
void fake_cupti_call(CUpti_CallbackId cbid, uint32_t corr)
{
  CUresult result = CUDA_SUCCESS;
  CUpti_CallbackData d = {.functionName = "cuModuleUnload", .correlationId = corr, .functionReturnValue = &result};
  if (cbid >= sizeof(enabled) || !enabled[cbid] || !subscriber)
    return;
  d.callbackSite = CUPTI_API_ENTER;
  subscriber(subscriber_data, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
  d.callbackSite = CUPTI_API_EXIT;
  subscriber(subscriber_data, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
}

/** A resource callback (a module's unload, a context's end), when enabled. */
API void fake_cupti_resource(CUpti_CallbackId cbid);
void fake_cupti_resource(CUpti_CallbackId cbid)
{
  CUpti_ResourceData d = {0};
  if (cbid < sizeof(resource_enabled) && resource_enabled[cbid] && subscriber)
    subscriber(subscriber_data, CUPTI_CB_DOMAIN_RESOURCE, cbid, &d);
}

/** A kernel record of launch `corr` (graph_node: 0, or the node of a graph launch). 0 when no buffer. */
API int fake_cupti_kernel(uint32_t corr, const char *name, uint32_t device, uint64_t start, uint64_t end,
                          uint64_t graph_node);
int fake_cupti_kernel(uint32_t corr, const char *name, uint32_t device, uint64_t start, uint64_t end,
                      uint64_t graph_node)
{
  CUpti_ActivityKernel10 *k = room(sizeof(*k));
  if (!k)
    return 0;
  k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k->correlationId = corr;
  k->name = interned(name);
  k->deviceId = device;
  k->streamId = 7;
  k->start = start;
  k->end = end;
  k->graphNodeId = graph_node;
  return 1;
}

/* A launch's kernel record, where the kernel kind is enabled (the stand-in driver's launches). */
static int kernel_of_launch(uint32_t corr, const char *name, uint32_t device, uint64_t start, uint64_t end,
                            uint64_t graph_node)
{
  if (!kinds_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] && !kinds_on[CUPTI_ACTIVITY_KIND_KERNEL])
    return 0;
  return fake_cupti_kernel(corr, name, device, start, end, graph_node);
}

/** Whether the subscriber enabled callbacks for `cbid`. */
API int fake_cupti_enabled(CUpti_CallbackId cbid);
int fake_cupti_enabled(CUpti_CallbackId cbid)
{
  return cbid < sizeof(enabled) && enabled[cbid];
}

/** Buffers asked for; nanoseconds spent in the library's buffer callback; the flush period set. */
API void fake_cupti_stats(uint64_t *requested, uint64_t *completing_ns, uint32_t *period_ms);
void fake_cupti_stats(uint64_t *requested, uint64_t *completing_ns, uint32_t *period_ms)
{
  *requested = requests, *completing_ns = complete_ns, *period_ms = flush_period_ms;
}
