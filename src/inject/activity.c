/*
 * CUPTI's completed activity buffers (inject/activity.h), read in CUPTI's own thread: kernels
 * summed per buffer by module, name and device, each kernel's module found by its launch's
 * correlation id (launch_modules.c); copies and memsets summed by kind; the first `budget` kernels, copies
 * and memsets drawn one by one for the trace, the rest only counted; the driver's JIT and NVTX
 * ranges as they come. Each buffer's lines go out together, in one write.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <stdlib.h>
#include <string.h>

#include "inject/activity.h"
#include "inject/buffers.h"
#include "inject/nvtx.h"
#include "inject/protocol.h"
#include "inject/record.h"
#include "inject/launch_modules.h"

static struct {
  CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
  CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
  /* atomics: kernels, copies and memsets offered to the trace (the first `budget` are drawn),
   * kernels whose launch was not found */
  uint64_t budget, offered, unattributed;
} A;

void gji_activity_init(gji_next_record_fn next_record, gji_dropped_fn dropped, uint64_t budget)
{
  A.next_record = next_record;
  A.dropped = dropped;
  A.budget = budget;
  __atomic_store_n(&A.offered, 0, __ATOMIC_RELAXED); /* an in-process session draws its own first ones */
  __atomic_store_n(&A.unattributed, 0, __ATOMIC_RELAXED);
}

/* Kernels of one buffer summed by (module, name, device): open addressing, so a buffer of 20,000
 * records costs 20,000 short look-ups however many kernels a program has. CUPTI shares one name
 * string among the records of a kernel, so the name's address is its identity here. */
#define SUM_BITS 12
#define SUMS (1u << SUM_BITS)
#define SUMS_FULL (SUMS / 2)
typedef struct sum {
  uint64_t module;
  const char *name;
  uint32_t device;
  uint64_t n, ns;
} sum;
typedef struct ksums {
  sum v[SUMS];
  uint16_t at[SUMS_FULL]; /* the entries in use, in the order they came */
  size_t n;
} ksums;

static void sums_out(ksums *s)
{
  for (size_t i = 0; i < s->n; i++) {
    sum *e = &s->v[s->at[i]];
    gji_line l;
    gji_begin(&l, GPUJIT_KIND(KSUM));
    gji_hex(&l, "module", e->module);
    gji_str(&l, "name", e->name);
    gji_u64(&l, "device", e->device);
    gji_u64(&l, "n", e->n);
    gji_u64(&l, "ns", e->ns);
    gji_end(&l);
    e->name = NULL;
  }
  s->n = 0;
}

static void add_sum(ksums *s, uint64_t module, const char *name, uint32_t device, uint64_t dur)
{
  static const char unnamed[] = "";
  uint64_t key;
  size_t i;
  if (!name)
    name = unnamed;
  key = module ^ (uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull ^ (uint64_t)device << 48;
  i = (size_t)((key ^ key >> 31) * 0xBF58476D1CE4E5B9ull >> (64 - SUM_BITS));
  for (;; i = (i + 1) & (SUMS - 1)) {
    sum *e = &s->v[i];
    if (!e->name)
      break;
    if (e->name == name && e->module == module && e->device == device) {
      e->n++, e->ns += dur;
      return;
    }
  }
  if (s->n == SUMS_FULL) { /* written out and started again: nothing is dropped */
    sums_out(s);
    add_sum(s, module, name, device, dur);
    return;
  }
  s->v[i] = (sum){module, name, device, 1, dur};
  s->at[s->n++] = (uint16_t)i;
}

/* Whether an activity (a kernel, copy or memset) is drawn in the trace: the first `budget` are. */
static bool trace_one(void)
{
  return __atomic_fetch_add(&A.offered, 1, __ATOMIC_RELAXED) < A.budget;
}

static void one_kernel(const CUpti_ActivityKernel10 *k, ksums *sums)
{
  uint64_t module = 0;
  /* a graph's node or a device-side launch had no launch callback: its module is not in the
   * table, and its name alone does not say which module launched it */
  const char *by_name = k->graphNodeId || k->isDeviceLaunched ? NULL : k->name;
  if (!gji_span_module(k->correlationId, by_name, &module))
    __atomic_fetch_add(&A.unattributed, 1, __ATOMIC_RELAXED);
  add_sum(sums, module, k->name, k->deviceId, k->end - k->start);
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

/* host clock minus CUPTI's, from the last "clock" record (gji_activity_clock) */
static int64_t clock_offset;

void gji_activity_clock(uint64_t cupti, uint64_t host) { __atomic_store_n(&clock_offset, (int64_t)(host - cupti), __ATOMIC_RELAXED); }

/* The driver calls that launch GPU work, by CUPTI's id: a step's launches (its host side). */
static const char *launch_api(uint32_t cbid)
{
  switch (cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: return "cuLaunchKernel";
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: return "cuLaunchKernel_ptsz";
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: return "cuLaunchKernelEx";
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: return "cuLaunchKernelEx_ptsz";
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel: return "cuLaunchCooperativeKernel";
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: return "cuLaunchCooperativeKernel_ptsz";
  case CUPTI_DRIVER_TRACE_CBID_cuLaunch: return "cuLaunch";
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid: return "cuLaunchGrid";
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync: return "cuLaunchGridAsync";
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch: return "cuGraphLaunch";
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: return "cuGraphLaunch_ptsz";
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync: return "cuMemcpyAsync";
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2: return "cuMemcpyHtoDAsync";
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2: return "cuMemcpyDtoHAsync";
  case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2: return "cuMemcpyDtoDAsync";
  case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async: return "cuMemsetD8Async";
  case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async: return "cuMemsetD32Async";
  default: return NULL;
  }
}

static void one_launch(const CUpti_ActivityAPI *a)
{
  const char *api = launch_api(a->cbid);
  gji_line l;
  if (!api)
    return;
  gji_begin_on(&l, GPUJIT_KIND(LAUNCH), a->threadId);
  gji_u64(&l, "corr", a->correlationId);
  gji_str(&l, "api", api);
  /* on the host clock: the thread's own times, as its other records are */
  gji_u64(&l, "t0", a->start + (uint64_t)__atomic_load_n(&clock_offset, __ATOMIC_RELAXED));
  gji_u64(&l, "t1", a->end + (uint64_t)__atomic_load_n(&clock_offset, __ATOMIC_RELAXED));
  gji_end(&l);
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

static bool unread; /* measuring only (gji_activity_unread) */

void gji_activity_unread(void)
{
  unread = true;
}

void CUPTIAPI gji_activity_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
  CUpti_Activity *a = NULL;
  ksums *sums;
  opsum ops[MAX_OPSUMS];
  size_t nops = 0, dropped = 0;
  (void)size;
  if (unread) {
    gji_buffer_give_back(buffer);
    return;
  }
  sums = calloc(1, sizeof(*sums));
  gji_batch_begin();
  while (valid && A.next_record && A.next_record(buffer, valid, &a) == CUPTI_SUCCESS) {
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
      if (sums)
        one_kernel((const CUpti_ActivityKernel10 *)a, sums);
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
    case CUPTI_ACTIVITY_KIND_DRIVER:
      one_launch((const CUpti_ActivityAPI *)a);
      break;
    default:
      break;
    }
  }
  if (sums)
    sums_out(sums);
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
  if (A.dropped && A.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
    gji_line l;
    gji_begin(&l, GPUJIT_KIND(DROPPED));
    gji_u64(&l, "records", dropped); /* CUPTI's own count: records it had no buffer for */
    gji_end(&l);
  }
  gji_batch_end();
  gji_buffer_give_back(buffer);
}

void gji_activity_end_record(void)
{
  gji_line l;
  uint64_t offered = __atomic_load_n(&A.offered, __ATOMIC_RELAXED);
  gji_begin(&l, GPUJIT_KIND(GPU_END));
  gji_u64(&l, "traced", offered < A.budget ? offered : A.budget);
  gji_u64(&l, "untraced", offered < A.budget ? 0 : offered - A.budget);
  /* kernels whose launch was not found: a graph's nodes, a launch no callback saw, one whose slot
   * was reused before its record came and whose name more than one module launched */
  gji_u64(&l, "unattributed", __atomic_load_n(&A.unattributed, __ATOMIC_RELAXED));
  /* buffers CUPTI asked for when none was ready: allocated in the thread that launched */
  gji_u64(&l, "late_buffers", gji_buffers_allocated_late());
  gji_end(&l);
}
